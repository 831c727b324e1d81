"""The agent sees both times of a timed verdict: device time (the speedups it has always seen) and host-inclusive
call time, each with its speedups, and which is which."""

from __future__ import annotations

from kernelmosaic.agent.feedback import timing_feedback
from kernelmosaic.contracts.verdict import Stat, Status, Timing, Verdict


def _stat(ms: float) -> Stat:
    return Stat(median_ms=ms, q1_ms=ms, q3_ms=ms, samples=9)


def test_device_and_host_inclusive_times_are_both_shown():
    timing = Timing(candidate=_stat(0.003), eager=_stat(0.012), speedup_vs_eager=4.0, timer="cuda_events",
                    candidate_host=_stat(0.021), eager_host=_stat(0.030), compile_host=_stat(0.042),
                    speedup_vs_eager_host=30 / 21, speedup_vs_compile_host=2.0, speedup_vs_eager_wall=3.1)
    text = timing_feedback(Verdict(accepted=True, status=Status.accepted, message="", timing=timing))
    assert "speedup vs eager 4x (device time" in text
    assert "by the verifier's own clock (back-to-back calls): speedup vs eager 3.1x" in text
    assert "host-inclusive call time: 0.021 ms" in text and "speedup vs eager 1.43x, vs torch.compile 2x" in text


def test_a_verdict_without_host_times_shows_device_time_only():
    timing = Timing(candidate=_stat(0.003), eager=_stat(0.012), speedup_vs_eager=4.0, timer="host")
    text = timing_feedback(Verdict(accepted=True, status=Status.accepted, message="", timing=timing))
    assert "host-inclusive" not in text and "speedup vs eager 4x" in text
