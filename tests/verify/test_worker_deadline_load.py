"""A request's time limit counts the worker's own work, not the machine's load (verify/pool.py, `LOAD_GRACE`): on a
loaded host the reference of a large problem ran past its 120 s limit and the problem was called `bad_problem`.
Real workers and real load: the worker's main thread and three busy loops share one pinned CPU, so the worker gets
about a quarter of it, and the time its thread waited for the CPU (the kernel's account, /proc schedstat) is added
to the limit, up to `LOAD_GRACE` times it. A worker that never finishes is still ended."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from kernelmosaic.verify.pool import LOAD_GRACE, Worker, WorkerDied, WorkerLimits

from .kit import write

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs Linux /proc schedstat")

# the problem's import spends `SECONDS` of its own CPU time (process time: load does not shorten or stretch it)
PROBLEM = '''\
import time

import torch
import torch.nn as nn

_t0 = time.process_time()
while time.process_time() - _t0 < {seconds}:
    pass


class Model(nn.Module):
    def forward(self, x):
        return x * 2


def get_inputs():
    return [torch.randn(8)]


def get_init_inputs():
    return []
'''


@contextlib.contextmanager
def _crowded(cpu: int, pids: list[int], loops: int = 3) -> Iterator[None]:
    """`pids` pinned to `cpu` beside `loops` busy loops pinned there too."""
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"], stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
            for _ in range(loops)]
    try:
        for pid in [*pids, *(p.pid for p in busy)]:
            os.sched_setaffinity(pid, {cpu})
        yield
    finally:
        for p in busy:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def _worker() -> Worker:
    worker = Worker("reference", "cpu", WorkerLimits())
    worker.start()
    return worker


def test_time_a_loaded_machine_held_the_worker_up_is_not_counted(tmp_path):
    problem = write(tmp_path, "problem.py", PROBLEM.format(seconds=1.5))
    worker = _worker()
    try:
        cpu = min(os.sched_getaffinity(0))
        with _crowded(cpu, [worker.pid]):
            t0 = time.monotonic()
            worker.call("setup", 3.0, problem=str(problem), seed=0, precision="fp32")
            wall = time.monotonic() - t0
        # a quarter of one CPU for 1.5 s of work: the wall time is past the 3 s limit, which the old deadline
        # (wall time alone) would have called a timeout
        assert wall > 3.0, f"the load did not hold the worker up ({wall:.1f} s): the test proves nothing"
    finally:
        worker.kill()


def test_a_worker_that_never_finishes_is_still_ended_on_a_loaded_machine(tmp_path):
    problem = write(tmp_path, "problem.py", PROBLEM.format(seconds=10**6))
    worker = _worker()
    try:
        with _crowded(min(os.sched_getaffinity(0)), [worker.pid]):
            t0 = time.monotonic()
            with pytest.raises(WorkerDied) as died:
                worker.call("setup", 1.0, problem=str(problem), seed=0, precision="fp32")
            wall = time.monotonic() - t0
        assert died.value.kind == "timeout"
        assert wall < LOAD_GRACE * 1.0 + 2.0, wall
        assert "waiting for a CPU on a loaded machine" in died.value.detail, died.value.detail
    finally:
        worker.kill()


def test_an_idle_worker_that_overruns_is_ended_at_its_limit(tmp_path):
    """Asleep, a worker waits for no CPU: its limit is the wall time, as before."""
    problem = write(tmp_path, "problem.py", PROBLEM.format(seconds=0).replace("pass", "pass\ntime.sleep(60)"))
    worker = _worker()
    try:
        t0 = time.monotonic()
        with pytest.raises(WorkerDied) as died:
            worker.call("setup", 1.0, problem=str(problem), seed=0, precision="fp32")
        assert died.value.kind == "timeout" and time.monotonic() - t0 < 2.5
        assert "loaded machine" not in died.value.detail
    finally:
        worker.kill()
