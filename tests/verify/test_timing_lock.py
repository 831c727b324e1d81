"""One timing phase per device at a time (issue 10): across threads, across processes, and between two Verifiers
of one process judging at once (the agent keeps one per precision)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from kernelmosaic.verify import Verifier, VerifyConfig
from kernelmosaic.verify.devlock import lock_path, timing_lock

from . import kit


def _held_elsewhere(path: Path, mode: str) -> subprocess.Popen:
    """Another process holding the lock file with `fcntl.<mode>` for one second (it has it when this returns)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen([sys.executable, "-c", (
        f"import fcntl, sys, time\nf = open(sys.argv[1], 'a+')\nfcntl.flock(f.fileno(), fcntl.{mode})\n"
        "print('held', flush=True)\ntime.sleep(1.0)\n"), str(path)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    return holder


def test_threads_take_turns(tmp_path):
    spans: list[tuple[float, float]] = []

    def hold():
        with timing_lock(tmp_path, "cuda:0"):
            start = time.monotonic()
            time.sleep(0.2)
            spans.append((start, time.monotonic()))

    threads = [threading.Thread(target=hold) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    spans.sort()
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False)), spans


def test_another_process_holding_the_device_makes_timing_wait(tmp_path):
    holder = _held_elsewhere(lock_path(tmp_path, "cpu"), "LOCK_EX")
    with timing_lock(tmp_path, "cpu") as waited:
        assert waited > 0.5
    holder.wait(timeout=30)
    with timing_lock(tmp_path, "cuda:1") as waited:  # another device is never blocked by it
        assert waited < 0.5


@pytest.mark.slow
def test_two_verifiers_never_time_at_once(build_cache, tmp_path):
    problem = kit.write(tmp_path, "problem.py", kit.PROBLEM_ADD_RELU)
    candidate = kit.write(tmp_path, "honest.py", kit.candidate("return ext.add_relu(a, b)"))
    configs = [VerifyConfig(device="cpu", trials=2, cache_dir=build_cache, timing_budget_ms=20, timing_rounds=2,
                            compile_baseline=False, precision=p) for p in ("fp32", "fp32")]
    spans: list[tuple[float, float]] = []
    waits: list[float] = []

    def judge(config: VerifyConfig) -> None:
        with Verifier(config) as verifier:
            v = verifier.verify(Path(problem), Path(candidate))
        assert v.accepted, v.message
        start = v.phase_started["timing_held"]  # the rounds, held alone (checks of the timed calls come after)
        spans.append((start, start + v.phase_seconds["timing_held"]))
        waits.append(v.phase_seconds["timing_lock_wait"])

    threads = [threading.Thread(target=judge, args=(c,)) for c in configs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(spans) == 2
    (s1, e1), (s2, e2) = sorted(spans)
    assert e1 <= s2 + 0.05, (spans, waits)  # the second held phase starts after the first ends


def _spans(tmp_path, modes: list[bool], hold_s: float = 0.3) -> list[tuple[float, float, bool]]:
    """Threads taking the lock in `modes` (True = shared), started together; (start, end, shared) of each hold."""
    spans: list[tuple[float, float, bool]] = []
    go = threading.Barrier(len(modes))

    def hold(shared: bool):
        go.wait()
        with timing_lock(tmp_path, "cuda:0", shared=shared):
            start = time.monotonic()
            time.sleep(hold_s)
            spans.append((start, time.monotonic(), shared))

    threads = [threading.Thread(target=hold, args=(m,)) for m in modes]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sorted(spans)


def _overlap(a, b) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def test_sanitizer_runs_share_the_device_with_each_other(tmp_path):
    spans = _spans(tmp_path, [True, True, True])
    assert all(_overlap(a, b) for a in spans for b in spans if a is not b), spans


def test_a_judgement_and_a_sanitizer_run_never_overlap(tmp_path):
    for modes in ([False, True, True], [True, False, True, False]):
        spans = _spans(tmp_path, modes)
        exclusive = [s for s in spans if not s[2]]
        assert len(spans) == len(modes)
        assert not any(_overlap(x, s) for x in exclusive for s in spans if s is not x), spans


def test_a_judgement_in_another_process_waits_for_a_sanitizer_run(tmp_path):
    reader = _held_elsewhere(lock_path(tmp_path, "cuda:0"), "LOCK_SH")
    with timing_lock(tmp_path, "cuda:0", shared=True) as waited:  # another reader goes straight in
        assert waited < 0.5
    with timing_lock(tmp_path, "cuda:0") as waited:  # a judgement waits for the reader to finish
        assert waited > 0.5
    reader.wait(timeout=30)
