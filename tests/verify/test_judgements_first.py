"""Judgements before sanitizer runs (devlock.JudgementsFirst): in an evaluation each thread judges a candidate and
then sanitizes it; without the gate the device alternated one judgement and one sanitizer run. These tests drive
the real gate and the real device lock (flock) with threads shaped like the Verifier's (`_judge`)."""

from __future__ import annotations

import threading
import time

from kernelmosaic.verify.devlock import JudgementsFirst, judgements_first, timing_lock


def _candidate(gate: JudgementsFirst, lock_dir, log: list, name: str, judge_s: float, sanitize_s: float) -> None:
    """One thread of an evaluation: judge holding the device alone, then a sanitizer run holding it shared."""
    with gate.judgement(), timing_lock(lock_dir, "gpu"):
        log.append(("judge", name, time.monotonic()))
        time.sleep(judge_s)
    gate.wait_turn(30.0)
    with timing_lock(lock_dir, "gpu", shared=True):
        log.append(("sanitize", name, time.monotonic()))
        time.sleep(sanitize_s)
        log.append(("sanitized", name, time.monotonic()))


def test_every_pending_judgement_runs_before_the_sanitizer_runs_which_then_overlap(tmp_path):
    gate, log = JudgementsFirst(), []
    threads = [threading.Thread(target=_candidate, args=(gate, tmp_path, log, f"c{k}", 0.15, 0.4)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    judged = [at for kind, _, at in log if kind == "judge"]
    started = [at for kind, _, at in log if kind == "sanitize"]
    ended = [at for kind, _, at in log if kind == "sanitized"]
    assert len(judged) == len(started) == 4
    # every judgement started before the first sanitizer run: none of them waited behind a sanitizer
    assert max(judged) < min(started)
    # the four sanitizer runs overlapped: together they took about one run's time, not four
    assert max(ended) - min(started) < 2 * 0.4
    assert gate.pending == 0


def test_a_sanitizer_run_waits_for_a_pending_judgement_then_goes_at_once():
    gate = JudgementsFirst()
    release = threading.Event()
    entered = threading.Event()

    def judgement():
        with gate.judgement():
            entered.set()
            release.wait(10)

    t = threading.Thread(target=judgement)
    t.start()
    entered.wait(5)
    threading.Timer(0.3, release.set).start()
    waited = gate.wait_turn(10.0)
    t.join(5)
    assert 0.25 <= waited < 5.0
    assert gate.wait_turn(10.0) < 0.1  # nothing pending: no wait


def test_a_judgement_that_never_ends_delays_a_sanitizer_run_only_up_to_the_bound():
    gate = JudgementsFirst()
    with gate.judgement():
        waited = gate.wait_turn(0.2)
    assert 0.15 <= waited < 2.0


def test_one_gate_per_device_key_shared_by_every_verifier_of_the_process():
    assert judgements_first("cache/0") is judgements_first("cache/0")
    assert judgements_first("cache/0") is not judgements_first("cache/1")
