"""Metrics from hand-built stored verdicts (no verifier): every number checked against a value computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kernelmosaic.contracts.isolation import MINIMUM
from kernelmosaic.contracts.messages import ToolCall
from kernelmosaic.contracts.trajectory import Solution, ToolCallEvent, ToolResultEvent, Totals
from kernelmosaic.contracts.verdict import Correctness, Env, Finding, Stat, Status, Timing, Verdict
from kernelmosaic.evaluate.baselines import BaselineCache
from kernelmosaic.evaluate.config import EvalConfig
from kernelmosaic.evaluate.report.rows import fast
from kernelmosaic.evaluate.stats import pass_at_k_estimate, rate
from kernelmosaic.evaluate.summary import summarize_run
from kernelmosaic.runs.task_meta import TaskMeta
from kernelmosaic.store import open_store

_ISOLATED = sorted({layer for options in MINIMUM.values() for layer in options[0]})
"""Layers meeting the documented minimum (`contracts.isolation.MINIMUM`), so an accepted, timed verdict counts as verified."""


def _verdict(status: Status, speedup: float = 0.0, compile_speedup: float | None = None, seed: int = 1,
             err: float = 0.0, flag: str = "", wall: float | None = None, timer: str = "host") -> Verdict:
    ok = status == Status.accepted
    v = Verdict(accepted=ok, status=status, message=status.value, policy="kernelbench", problem_sha256="p" * 8,
                correctness=Correctness(trials=0 if status == Status.compile_error else 5, passed=5 if ok else 2,
                                        seed=seed, max_abs_error=err),
                env=Env(device="cpu", hostname="h", torch="t", precision="fp32", isolation=_ISOLATED), seconds=2.0,
                findings=[Finding(rule=flag, severity="flag", message="degenerate")] if flag else [])
    if ok and speedup:
        cand = Stat(median_ms=1.0, q1_ms=1.0, q3_ms=1.0, samples=3)
        eager = Stat(median_ms=speedup, q1_ms=speedup, q3_ms=speedup, samples=3)
        comp = Stat(median_ms=compile_speedup, q1_ms=1, q3_ms=1, samples=3) if compile_speedup else None
        v.timing = Timing(candidate=cand, eager=eager, compile=comp, speedup_vs_eager=speedup,
                          speedup_vs_compile=compile_speedup, timer=timer, speedup_vs_eager_wall=wall)
    return v


def _episode(store, run_id: int, task_id: str, candidates: list[tuple[str, list[Verdict]]], tokens: int = 100) -> None:
    """Record writes and verdicts as the harness does: a write_candidate call, then one benchmark call per verdict."""
    episode = store.start_episode(run_id, task_id)
    seq = 0
    for n, (source, verdicts) in enumerate(candidates):
        sha = store.record_candidate(episode.id, source)
        call = ToolCall(id=f"w{n}", name="write_candidate", arguments={"source": source})
        store.append_event(episode.id, seq, ToolCallEvent(step=n, call=call))
        store.append_event(episode.id, seq + 1, ToolResultEvent(step=n, call_id=call.id, name=call.name, content="",
                                                                candidate_sha256=sha))
        seq += 2
        for k, verdict in enumerate(verdicts):
            verdict = verdict.model_copy(update={"candidate_sha256": sha})
            store.record_verdict(episode.id, sha, verdict)
            bench = ToolCall(id=f"b{n}{k}", name="benchmark")
            store.append_event(episode.id, seq, ToolCallEvent(step=n, call=bench))
            store.append_event(episode.id, seq + 1, ToolResultEvent(step=n, call_id=bench.id, name="benchmark",
                                                                    content="", verdict=verdict, candidate_sha256=sha))
            seq += 2
    best = None
    final = candidates[-1][1] if candidates else []
    if final and final[-1].accepted:
        final_sha = store.record_candidate(episode.id, candidates[-1][0])
        best = Solution(source=candidates[-1][0], candidate_sha256=final_sha,
                        verdict=final[-1].model_copy(update={"candidate_sha256": final_sha}), step=0)
    store.finish_episode(episode.id, "judged", Totals(prompt_tokens=tokens, wall_seconds=10.0), best)


@pytest.fixture
def run(tmp_path):
    with open_store(f"sqlite:///{tmp_path / 'km.db'}") as store:
        meta = {"a": TaskMeta(level=1, category="gemm"), "b": TaskMeta(level=1, category="gemm"),
                "c": TaskMeta(level=2, category="fused"), "d": TaskMeta(level=1, category="gemm")}
        config = EvalConfig(mode="one-shot", model="scripted:x", samples=2, device="cpu", task_meta=meta)
        rid = store.create_run("evaluate", "scripted:x", "hand", config)
        A = Status.accepted
        _episode(store, rid, "a", [("a0", [_verdict(A, 3.0, 1.5, seed=1, err=1e-6), _verdict(A, 2.5, 1.2, seed=2)])])
        _episode(store, rid, "a__s1", [("bad", [_verdict(Status.compile_error)]), ("a1", [_verdict(A, 0.5, seed=1)])])
        _episode(store, rid, "b", [("b0", [_verdict(Status.output_mismatch, err=0.7)])])
        _episode(store, rid, "b__s1", [("b1", [_verdict(Status.compile_error)])])
        _episode(store, rid, "c", [("c0", [_verdict(A, 1.2, seed=1, err=1e-5)])])
        _episode(store, rid, "c__s1", [])  # no candidate written
        _episode(store, rid, "d", [("d0", [_verdict(A, 9.0, flag="task-zero-output-passes")])])
        yield store, rid


def test_every_number_matches_a_hand_computation(run, tmp_path):
    store, rid = run
    s = summarize_run(store, rid, BaselineCache(tmp_path / "none.json"))
    o = s.overall
    # d is flagged: reported apart, never counted. Six episodes over three tasks count.
    assert [f.task_id for f in s.flagged] == ["d"] and "task-zero-output-passes" in s.flagged[0].why
    assert (o.episodes, o.tasks) == (6, 3)
    # gate 1: a, a__s1 (its answer a1 is accepted), b (ran, wrong), c pass; b__s1 (compile error) and c__s1 fail.
    assert (o.gate1_compile.numerator, o.gate1_compile.denominator) == (4, 6)
    # first judged candidate: a ok, a__s1 compile_error, b ok, b__s1 compile_error, c ok; c__s1 has no verdict.
    assert (o.first_compile.numerator, o.first_compile.denominator) == (3, 5)
    assert (o.correct.numerator, o.correct.denominator) == (3, 6)
    # fast_p vs eager (device): speedups of the correct answers are 2.5 (latest of a), 0.5, 1.2.
    assert fast(o, 0.0).numerator == 3 and fast(o, 1.0).numerator == 2 and fast(o, 1.5).numerator == 1
    assert fast(o, 2.0).numerator == 1 and fast(o, 2.0).denominator == 6
    # vs torch.compile: only a's answer carries it (1.2), so fast_1 = 1/6 and the others count as not faster.
    assert fast(o, 1.0, "compile").numerator == 1 and "2 correct answer(s)" in fast(o, 1.0, "compile").note
    d = o.speedup["eager_device"]
    assert d.values == [2.5, 0.5, 1.2]
    assert d.p50 == pytest.approx(1.2) and d.p10 == pytest.approx(0.5 + 0.2 * 0.7)
    assert d.p90 == pytest.approx(1.2 + 0.8 * 1.3) and d.geomean == pytest.approx((2.5 * 0.5 * 1.2) ** (1 / 3))
    assert not o.speedup["eager_host"].measured  # the hand-built timings carry no host-inclusive figures
    assert not fast(o, 1.0, time="wall").measured  # nor the verifier's own clock's
    # seeds: only a's answer has verdicts under two seeds, both passed.
    assert (o.seeds.numerator, o.seeds.denominator) == (2, 2)
    assert not o.alternatives.measured and not o.sanitizer.measured and not o.peak_memory.measured
    # repair rounds: a 0 (its first candidate passed), a__s1 1, c 0.
    assert sorted(o.repair_rounds.values) == [0.0, 0.0, 1.0]
    # pass@1 per task: a 2/2 -> 1, b 0/2 -> 0, c 1/2 -> 0.5; pass@2: 1, 0, 1.
    p1, p2 = o.pass_at_k
    assert (p1.k, p2.k) == (1, 2)
    assert p1.rate.value == pytest.approx(0.5) and p2.rate.value == pytest.approx(2 / 3)
    # tokens per solved task: 6 counted episodes x 100 tokens over 3 solved.
    assert o.cost.tokens.value == pytest.approx(200.0) and not o.cost.gpu_seconds.measured
    # the max-error distribution is over answers that ran their trials (not the compile error, not no-candidate).
    # a's latest verdict (seed 2) and a1 recorded 0; b's 0.7; c's 1e-5.
    assert sorted(o.max_abs_error.values) == [0.0, 0.0, 1e-5, 0.7]
    assert set(s.by_level) == {"L1", "L2"} and s.by_level["L2"].correct.value == pytest.approx(0.5)
    assert set(s.by_category) == {"gemm", "fused"}


def test_intervals_are_deterministic_bootstraps_over_tasks(run, tmp_path):
    store, rid = run
    first = summarize_run(store, rid).model_dump()
    assert summarize_run(store, rid).model_dump() == first
    correct = summarize_run(store, rid).overall.correct
    # per task (a: 2/2, b: 0/2, c: 1/2): the resampled pooled rate lies in [0, 1] and brackets the estimate.
    assert 0.0 <= correct.ci_low <= correct.value <= correct.ci_high <= 1.0
    assert correct.ci_low < correct.ci_high


def test_pass_at_k_and_rate_helpers():
    assert pass_at_k_estimate(2, 1, 1) == 0.5 and pass_at_k_estimate(5, 0, 3) == 0.0
    assert pass_at_k_estimate(5, 2, 2) == pytest.approx(1 - math.comb(3, 2) / math.comb(5, 2))
    with pytest.raises(ValueError):
        pass_at_k_estimate(1, 1, 2)
    r = rate({"x": (1.0, 1.0), "y": (0.0, 1.0)}, "empty")
    assert r.value == 0.5 and r.measured
    assert not rate({}, "nothing here").measured and rate({}, "nothing here").note == "nothing here"
    assert np.isfinite([r.ci_low, r.ci_high]).all()


def test_peak_memory_is_the_candidate_over_reference_ratio_of_correct_answers(tmp_path):
    """Verdicts judged on CUDA carry each forward's peak memory (verify/judge.py); the metric is their ratio's
    distribution over correct answers only (a wrong answer's memory says nothing)."""
    from kernelmosaic.contracts.verdict import MemoryUse

    def with_memory(v: Verdict, cand: int, ref: int) -> Verdict:
        return v.model_copy(update={"memory": MemoryUse(candidate_peak_bytes=cand, reference_peak_bytes=ref,
                                                        ratio=cand / ref)})

    with open_store(f"sqlite:///{tmp_path / 'km.db'}") as store:
        meta = {t: TaskMeta(level=1, category="gemm") for t in "xyz"}
        config = EvalConfig(mode="one-shot", model="scripted:x", device="cuda", task_meta=meta)
        rid = store.create_run("evaluate", "scripted:x", "hand", config)
        _episode(store, rid, "x", [("x0", [with_memory(_verdict(Status.accepted, 2.0), 3 << 20, 4 << 20)])])
        _episode(store, rid, "y", [("y0", [with_memory(_verdict(Status.accepted, 1.5), 8 << 20, 4 << 20)])])
        _episode(store, rid, "z", [("z0", [with_memory(_verdict(Status.output_mismatch), 1 << 20, 4 << 20)])])
        o = summarize_run(store, rid, BaselineCache(tmp_path / "none.json")).overall
    assert o.peak_memory.measured and sorted(o.peak_memory.values) == [0.75, 2.0]
    assert o.peak_memory.p50 == pytest.approx(1.375)


def test_a_task_the_review_turned_away_leaves_every_denominator(run, tmp_path):
    from kernelmosaic.store.reviews import ReviewLog

    store, rid = run
    log = ReviewLog(store)
    log.record_decision("c", "accept", "alice")
    log.record_decision("b", "reject", "bob", "the reference is numerically unstable")  # after the run
    s = summarize_run(store, rid)
    o = s.overall
    # b and b__s1 are reported apart with the decision; a, a__s1, c, c__s1 count.
    assert (o.episodes, o.tasks) == (4, 2)
    assert (o.gate1_compile.numerator, o.gate1_compile.denominator) == (3, 4)
    assert o.correct.denominator == 4 and o.first_compile.denominator == 3  # c__s1 has no verdict
    apart = {(f.task_id, f.sample): f.why for f in s.flagged}
    assert set(apart) == {("b", 0), ("b", 1), ("d", 0)}
    assert apart[("b", 1)].startswith("review: reject by bob") and "numerically unstable" in apart[("b", 1)]
    log.record_decision("c", "needs-edit", "bob", "the shapes in the statement are wrong")
    assert summarize_run(store, rid).overall.episodes == 2
    log.record_decision("b", "accept", "bob")  # the latest decision is what holds
    log.record_decision("c", "accept", "bob")
    assert summarize_run(store, rid).overall.episodes == 6


@pytest.mark.parametrize("timer", ["cuda_events", "host"])
def test_fast_p_by_the_verifiers_own_clock_counts_what_the_candidate_cannot_forge(tmp_path, timer):
    """Two tasks, both correct: one whose reported speedup is 3.0 while the verifier's own clock saw 0.9 (a timer
    the candidate's process lied to, within the reject bounds), one honest at 1.6 and 1.5. By the wall clock only
    the honest one is faster. By device time, a GPU verdict's events count both (the events and the wall clock
    measure different things there); on the CPU, where both are host time, the disagreement makes the reported
    speedup unreliable, counted at the wall clock's figure (`contracts.speedup.timing_speedups`)."""
    with open_store(f"sqlite:///{tmp_path / 'km.db'}") as store:
        meta = {"x": TaskMeta(level=1, category="gemm"), "y": TaskMeta(level=1, category="gemm")}
        config = EvalConfig(mode="one-shot", model="scripted:x", samples=1, device="cpu", task_meta=meta)
        rid = store.create_run("evaluate", "scripted:x", "hand", config)
        _episode(store, rid, "x", [("x0", [_verdict(Status.accepted, 3.0, wall=0.9, timer=timer)])])
        _episode(store, rid, "y", [("y0", [_verdict(Status.accepted, 1.6, wall=1.5, timer=timer)])])
        o = summarize_run(store, rid, BaselineCache(tmp_path / "none.json")).overall
    device = fast(o, 1.0)
    assert (device.numerator, device.denominator) == ((2, 2) if timer == "cuda_events" else (1, 2))
    wall = fast(o, 1.0, time="wall")
    assert wall.measured and (wall.numerator, wall.denominator) == (1, 2)
    assert fast(o, 0.0, time="wall").numerator == 2
