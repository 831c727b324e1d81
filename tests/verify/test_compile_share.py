"""Building the `torch.compile` baseline holds the device only while it runs kernels, not while Dynamo and Inductor
compile: the reference worker holds the device's lock file itself (`kmworker/compile_share.py`), lent by the judgement's
hold (`DeviceHold.lend`). A timing phase is the lock taken alone (`LOCK_EX`): here a probe that tries to take it
alone, without waiting, shows when the lock was free. Real Dynamo compiles, on the CPU (the lock's mechanics are the
device's; on a GPU the same calls also synchronize the device before letting go)."""

from __future__ import annotations

import fcntl
import os
import threading
import time

import pytest
import torch

from kernelmosaic.verify.devlock import DeviceHold
from kernelmosaic.verify.pool import Worker, WorkerLimits
from kernelmosaic.verify.sandbox.kmworker.compile_share import CompileShare

from .kit import write


def _free(path) -> bool:
    """Whether a timing phase could take the device now."""
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


def test_the_lock_is_let_go_of_while_dynamo_compiles_and_held_while_anything_runs(tmp_path):
    from torch._dynamo.callback import callback_handler

    lock = tmp_path / "timing.lock"
    lock.touch()
    seen: list[bool] = []

    def probe(_args) -> None:
        seen.append(_free(lock))

    def f(x):
        return torch.relu(x) * 2 + 1

    compiled = torch.compile(f, backend="eager")
    try:
        with CompileShare(str(lock), "cpu") as share:
            callback_handler.register_start_callback(probe)  # runs after CompileShare's own start callback
            assert not _free(lock), "held from the start: inputs and eager code run held"
            out = compiled(torch.randn(64))
            assert not _free(lock), "held again once the compile ended"
            compiled(torch.randn(64))  # compiled already: no compile, no letting go
        assert _free(lock)
    finally:
        callback_handler.remove_start_callback(probe)
    assert seen == [True], "the lock was free while Dynamo compiled"
    assert share.compiles == 1 and share.unheld_s > 0 and out.shape == (64,)
    assert share._let_go not in callback_handler.start_callbacks  # nothing left behind for later compiles


def test_without_a_lock_file_nothing_is_taken(tmp_path):
    with CompileShare(None, "cpu") as share:
        torch.compile(lambda x: x + 1, backend="eager")(torch.ones(3))
    assert share.compiles == 0 and share.unheld_s == 0.0


PROBLEM = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.tanh(x) * 3 + x


def get_inputs():
    return [torch.randn(256, 256)]


def get_init_inputs():
    return []
'''


@pytest.mark.parametrize("lend", [True, False])
def test_the_reference_worker_builds_the_baseline_with_the_device_lent_or_held(tmp_path, lend):
    """Lent: a timing phase could have taken the device during the build (Inductor's compile, seconds on the CPU);
    held around the call, as every other call is: never."""
    problem = write(tmp_path, "problem.py", PROBLEM)
    worker = Worker("reference", "cpu", WorkerLimits())
    worker.start()
    try:
        worker.call("setup", 120.0, problem=str(problem), seed=0, precision="fp32")
        with DeviceHold(tmp_path / "cache", "test-device", 5.0) as hold:
            worker.hold = hold
            samples: list[tuple[float, bool]] = []
            done = threading.Event()

            def watch():
                while not done.is_set():
                    samples.append((time.monotonic(), _free(hold.path)))
                    time.sleep(0.02)

            watcher = threading.Thread(target=watch)
            watcher.start()
            try:
                started = time.monotonic()
                reply = worker.call("prepare_compile", 600.0, lend_device=lend, seed=3)
                ended = time.monotonic()
            finally:
                done.set()
                watcher.join()
        # while the call was in flight (its first and last moments left out: the watcher may probe just before or
        # after the call holds the lock)
        free = [ok for at, ok in samples if started + 0.1 < at < ended - 0.1]
        assert len(free) > 10, samples
        if lend:
            assert reply["compiles"] >= 1 and reply["unheld_s"] > 0, reply
            assert any(free), "the device was never free while the baseline was built"
        else:
            assert reply == {"unheld_s": 0.0, "compiles": 0}
            assert not any(free), "a timing phase could take the device during a held call"
    finally:
        worker.kill()
