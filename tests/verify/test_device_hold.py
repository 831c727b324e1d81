"""The device lock's two modes (devlock.DeviceHold): judgements share a GPU call by call and hold it alone only
while they time.

On the H200 (2026-12-01) a judgement that held the GPU alone throughout took 55 s for a 16M-element task, of which
18 s timing; the rest (transfers, float64 comparisons, worker start-ups) needs no exclusive device. These tests drive
the real flock and the real in-process gate with threads shaped like the Verifier's judges."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

from kernelmosaic.verify import VerifyConfig
from kernelmosaic.verify.devlock import DeviceHold, TimingFirst, timing_first, timing_lock
from kernelmosaic.verify.verifier import Verifier


def _judge(lock_dir, log: list, name: str, shared_s: float, timing_s: float) -> None:
    """One judge: two device calls (shared), a timing phase held alone, one more device call."""
    with DeviceHold(lock_dir, "gpu", 30.0) as hold:
        for _ in range(2):
            with hold.shared():
                log.append(("shared", name, time.monotonic()))
                time.sleep(shared_s / 2)
                log.append(("shared_end", name, time.monotonic()))
        with hold.exclusive():
            with hold.shared():  # a worker call inside the timing phase takes nothing more
                log.append(("timing", name, time.monotonic()))
                time.sleep(timing_s)
                log.append(("timing_end", name, time.monotonic()))
        with hold.shared():
            log.append(("shared", name, time.monotonic()))
            time.sleep(shared_s)
            log.append(("shared_end", name, time.monotonic()))


def _intervals(log: list, start: str, end: str) -> list[tuple[str, float, float]]:
    opened: dict[str, float] = {}
    out = []
    for kind, name, at in log:
        if kind == start:
            opened[name] = at
        elif kind == end:
            out.append((name, opened.pop(name), at))
    return out


def test_judgements_overlap_except_while_one_times(tmp_path):
    log: list = []
    threads = [threading.Thread(target=_judge, args=(tmp_path, log, f"j{k}", 0.4, 0.15)) for k in range(3)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    took = time.monotonic() - t0
    timings = _intervals(log, "timing", "timing_end")
    shared = _intervals(log, "shared", "shared_end")
    assert len(timings) == 3 and len(shared) == 9
    # a timing phase has the device alone: no other judge's shared work and no other timing inside it
    for name, a, b in timings:
        for other, c, d in shared + timings:
            if other != name:
                assert d <= a + 1e-3 or c >= b - 1e-3, f"{other} ran during {name}'s timing"
    # the shared work overlapped: held alone throughout, three judges take 3 x (0.4 + 0.15 + 0.4) = 2.85 s
    assert took < 2.0, took


def test_a_timing_waits_only_for_the_calls_in_flight_and_goes_before_later_calls(tmp_path):
    """flock is not fair; the gate makes a new call of the process wait for a pending timing."""
    log: list = []
    older = DeviceHold(tmp_path, "gpu", 30.0).__enter__()
    in_call = older.shared()
    in_call.__enter__()  # an older judgement's call is running on the device

    def timer():
        with DeviceHold(tmp_path, "gpu", 30.0) as hold, hold.exclusive():
            log.append(("timing", time.monotonic()))

    def newcomer():
        with DeviceHold(tmp_path, "gpu", 30.0) as hold, hold.shared():
            log.append(("newcomer", time.monotonic()))

    t = threading.Thread(target=timer)
    t.start()
    deadline = time.monotonic() + 5
    while timing_first(tmp_path, "gpu").pending == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    n = threading.Thread(target=newcomer)
    n.start()
    time.sleep(0.3)
    assert log == []  # the timing waits for the call in flight; the newcomer waits for the timing
    in_call.__exit__(None, None, None)  # the call ends: the judgement still runs, but holds nothing
    t.join(10)
    n.join(10)
    assert [kind for kind, _ in log] == ["timing", "newcomer"]
    with older.shared():  # the older judgement's next call goes in once the timing is over
        pass
    assert older.waited < 1.0
    older.__exit__(None, None, None)


def test_exclusive_inside_a_call_is_refused(tmp_path):
    with DeviceHold(tmp_path, "gpu", 30.0) as hold, hold.shared():
        try:
            with hold.exclusive():
                pass
        except RuntimeError as exc:
            assert "wait for itself" in str(exc)
        else:
            raise AssertionError("exclusive() inside shared() must be refused")


def test_a_pending_timing_delays_a_newcomer_only_up_to_the_bound():
    gate = TimingFirst()
    with gate.timing():
        waited = gate.turn(0.2)
    assert 0.15 <= waited < 2.0
    assert gate.turn(5.0) < 0.1  # nothing pending: no wait


def test_a_shared_holder_in_another_process_keeps_a_timing_waiting(tmp_path):
    """Across processes the flock alone orders them: a sanitizer run elsewhere holds the GPU shared."""
    code = ("import sys, time\nfrom pathlib import Path\nfrom kernelmosaic.verify.devlock import timing_lock\n"
            "with timing_lock(Path(sys.argv[1]), 'gpu', shared=True):\n    print('held', flush=True)\n    time.sleep(1.0)\n")
    proc = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    with DeviceHold(tmp_path, "gpu", 30.0) as hold:
        with hold.shared():  # shared with the other process: no wait
            pass
        assert hold.waited < 0.5
        with hold.exclusive() as waited:
            assert 0.4 < waited < 10
        # the wait to hold it alone is a wait for the device too: Verdict.device_seconds leaves it out
        assert waited <= hold.waited < waited + 0.5
    proc.wait(10)
    with timing_lock(tmp_path, "gpu") as waited:  # released on exit
        assert waited < 0.5


def test_one_gate_per_device_lock_shared_by_every_verifier_of_the_process(tmp_path):
    assert timing_first(tmp_path, "cuda:0") is timing_first(tmp_path, "cuda:0")
    assert timing_first(tmp_path, "cuda:0") is not timing_first(tmp_path, "cuda:1")


def test_judges_per_gpu_device_slots_on_every_gpu_one_on_the_cpu(tmp_path):
    config = VerifyConfig(device="cuda", cache_dir=tmp_path, judges_per_gpu=3)
    with Verifier(config, devices=["cuda:0", "cuda:1"]) as v:  # slots start no worker until they judge
        assert v.device_count == 6
        assert sorted(s.device for s in v._all) == ["cuda:0"] * 3 + ["cuda:1"] * 3
    with Verifier(config.model_copy(update={"device": "cpu"})) as v:
        assert v.device_count == 1


_SLOW_SETUP = '''\
import time
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        time.sleep(1.0)

    def forward(self, x):
        return x * 2


def get_inputs():
    return [torch.randn(8)]


def get_init_inputs():
    return []
'''


def test_a_slots_worker_calls_take_the_judgements_hold(tmp_path):
    """Worker.call takes the slot's hold shared for the length of the call: a timing elsewhere waits for it, and
    once the judgement lets go of the slot its reference worker takes nothing."""
    from kernelmosaic.verify.slot import DeviceSlot

    problem = tmp_path / "problem.py"
    problem.write_text(_SLOW_SETUP)
    slot = DeviceSlot("cpu", VerifyConfig(device="cpu", cache_dir=tmp_path, trials=1))
    try:
        with DeviceHold(tmp_path, "gpu", 30.0) as hold:
            slot.use_hold(hold)
            worker = threading.Thread(target=slot.reference, args=(str(problem), "sha"))
            worker.start()
            time.sleep(0.2)
            deadline = time.monotonic() + 60
            while slot.ref is None or not slot.ref.env:  # the reference worker is up; its setup call sleeps 1 s
                assert time.monotonic() < deadline
                time.sleep(0.02)
            time.sleep(0.2)  # its setup call has begun
            with timing_lock(tmp_path, "gpu") as waited:
                assert slot.ref.hold is hold
            assert waited > 0.3, waited
            worker.join(60)
            slot.use_hold(None)
            assert slot.ref.hold is None
    finally:
        slot.close()
