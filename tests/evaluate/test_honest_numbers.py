"""Numbers the measurement does not support are said so: an unreliable speedup is marked and left out of the
headline distribution, a value never measured is null / "not measured" (never 0), exact errors stay on the plot."""

from __future__ import annotations

import json

import pytest
from test_metrics_by_hand import _episode, _verdict

from kernelmosaic.contracts.speedup import MAX_SPREAD, WALL_AGREEMENT, read_speedup, timing_speedups
from kernelmosaic.contracts.verdict import Stat, Status, Timing
from kernelmosaic.evaluate.baselines import BaselineCache
from kernelmosaic.evaluate.config import EvalConfig
from kernelmosaic.evaluate.report import plots
from kernelmosaic.evaluate.report.writer import write_report
from kernelmosaic.evaluate.summary import summarize_run
from kernelmosaic.runs.task_meta import TaskMeta
from kernelmosaic.store import open_store


def test_read_speedup_reliable_only_within_the_spread():
    tight = Stat(median_ms=1.0, q1_ms=0.98, q3_ms=1.02, samples=30)
    wide = Stat(median_ms=1.0, q1_ms=0.4, q3_ms=2.5, samples=30)  # a relative IQR of 2.1, as on a busy CPU
    base = Stat(median_ms=2.0, q1_ms=1.96, q3_ms=2.04, samples=30)
    good, bad = read_speedup(tight, base), read_speedup(wide, base)
    assert good.value == pytest.approx(2.0) and good.reliable and good.describe() == "2.00x"
    assert bad.value == pytest.approx(2.0) and not bad.reliable and bad.high / bad.low > MAX_SPREAD
    assert bad.describe() == "unreliable: 0.78x-5.10x between quartiles (median 2.00x)"
    assert read_speedup(tight, None).describe() == "not measured" and read_speedup(tight, None).value is None


def _cpu_timing(cand_ms: float, eager_ms: float, wall: float | None, timer: str = "host") -> Timing:
    cand = Stat(median_ms=cand_ms, q1_ms=0.98 * cand_ms, q3_ms=1.02 * cand_ms, samples=30)
    eager = Stat(median_ms=eager_ms, q1_ms=0.98 * eager_ms, q3_ms=1.02 * eager_ms, samples=30)
    comp = Stat(median_ms=eager_ms / 2, q1_ms=0.49 * eager_ms, q3_ms=0.51 * eager_ms, samples=30)
    return Timing(candidate=cand, eager=eager, compile=comp, candidate_host=cand, eager_host=eager, compile_host=comp,
                  speedup_vs_eager=eager_ms / cand_ms, timer=timer, speedup_vs_eager_wall=wall)


def test_a_cpu_speedup_the_verifiers_own_clock_does_not_support_is_unreliable_at_its_clocks_figure():
    """Red team 12's transient clock swap: the process claimed 1.39x where back-to-back calls timed from outside
    showed 0.70x. Every speedup built on the candidate's own samples is marked, its slow end at the outside
    figure (vs torch.compile: lowered by the same factor); within WALL_AGREEMENT it stands; on a GPU (CUDA events,
    launches overlapped in the burst) it is not compared."""
    forged = timing_speedups(_cpu_timing(0.40, 0.556, 0.70))
    for key in ("eager_device", "eager_host"):
        r = forged[key]
        assert not r.reliable and r.wall == 0.70 and r.low == pytest.approx(0.70), r
        assert "the verifier's own clock (0.70x" in r.describe()
    comp = forged["compile_device"]
    assert not comp.reliable and comp.low == pytest.approx(comp.value * 0.70 / 1.39, rel=1e-3)
    close = timing_speedups(_cpu_timing(0.40, 0.556, 1.39 / (0.99 * WALL_AGREEMENT)))
    assert all(r.reliable and r.wall is None for r in close.values()), close
    gpu = timing_speedups(_cpu_timing(0.40, 0.556, 0.70, timer="cuda_events"))
    assert all(r.reliable for r in gpu.values()), gpu
    assert timing_speedups(_cpu_timing(0.40, 0.556, None))["eager_device"].reliable


@pytest.fixture
def summary(tmp_path):
    with open_store(f"sqlite:///{tmp_path / 'km.db'}") as store:
        meta = {t: TaskMeta(level=1, category="gemm") for t in "abc"}
        config = EvalConfig(mode="one-shot", model="scripted:x", samples=1, device="cpu", task_meta=meta)
        rid = store.create_run("evaluate", "scripted:x", "hand", config)
        wide = _verdict(Status.accepted, 2.0)
        wide.timing.candidate = Stat(median_ms=1.0, q1_ms=0.4, q3_ms=2.5, samples=9)
        _episode(store, rid, "a", [("a0", [_verdict(Status.accepted, 3.0)])], tokens=0)
        _episode(store, rid, "b", [("b0", [wide])], tokens=0)
        _episode(store, rid, "c", [("c0", [_verdict(Status.accepted, err=2e-6)])], tokens=0)  # accepted, never timed
        yield store, summarize_run(store, rid, BaselineCache(tmp_path / "none.json"))


def test_a_task_without_a_level_has_none_not_zero():
    from kernelmosaic.evaluate.metrics import TaskRow

    assert TaskRow(episode_id=1, task_id="x", status="accepted", gate1=True, correct=True).level is None


def test_rows_and_summary_say_unreliable_and_not_measured(summary, tmp_path):
    store, s = summary
    rows = {r.task_id: r for r in s.tasks}
    assert rows["b"].speedup_unreliable == ["eager_device"] and rows["a"].speedup_unreliable == []
    assert rows["c"].speedup_eager is None and rows["c"].candidate_ms is None
    assert rows["a"].speedup_compile is None  # no torch.compile baseline was timed: null, not 0
    assert all(r.tokens is None for r in rows.values())  # the backend reported no token counts
    headline = s.overall.speedup["eager_device"]
    assert headline.values == [3.0] and "1 speedup(s) left out" in headline.note
    # an unreliable speedup counts in fast_p by the slow end of its range: b's median 2.0x spans 0.8x-5.0x
    assert rows["b"].speedup_low["eager_device"] == pytest.approx(0.8)
    fast = {f.p: f.rate for f in s.overall.fast_p if f.baseline == "eager" and f.time == "device"}
    assert fast[0].numerator == 2 and fast[1].numerator == 1  # faster than 0 on its whole range, not than 1
    assert "1 unreliable speedup(s) counted by the slow end" in fast[1].note

    write_report(store, [s], tmp_path / "report")
    data = json.loads((tmp_path / "report" / "summary.json").read_text())
    tasks = {t["task_id"]: t for t in data["runs"][0]["tasks"]}
    assert tasks["c"]["speedup_compile"] is None and tasks["c"]["speedup_eager"] is None and tasks["a"]["tokens"] is None
    # no cost reported, no verdict on a GPU, no cached baseline: null in the JSON, never 0
    assert all(t["cost_usd"] is None and t["gpu_seconds"] is None and t["baseline_drift"] is None
               for t in tasks.values()), tasks
    assert tasks["a"]["level"] == 1  # a known level stays
    html = (tmp_path / "report" / "report.html").read_text()
    body = html[html.index('id="tasks-'):]
    assert "2.000 (unreliable)" in body and "not measured" in body and ">0.000<" not in body


def test_the_error_plot_keeps_exact_answers(summary, monkeypatch):
    _, s = summary
    drawn = {}
    monkeypatch.setattr(plots, "_png", lambda fig: drawn.setdefault("fig", fig) and "")
    plots.error_histogram([s])
    ax = drawn["fig"].axes[0]
    assert sum(p.get_height() for p in ax.patches) == len(s.overall.max_abs_error.values) == 3
    assert f"2 error(s) below {plots.ERROR_FLOOR:g}" in ax.get_xlabel()


def test_verify_prints_an_unreliable_speedup_with_its_range_and_a_warning():
    from rich.console import Console

    from kernelmosaic.verify.cli import _summary

    verdict = _verdict(Status.accepted, 2.0, 1.5)
    console = Console(width=400, record=True)
    _summary(verdict, False, console)
    assert "-> 2.00x," in console.export_text() and "unreliable" not in console.export_text()
    verdict.timing.candidate = Stat(median_ms=1.0, q1_ms=0.4, q3_ms=2.5, samples=9)
    console = Console(width=400, record=True)
    _summary(verdict, False, console)
    text = console.export_text()
    assert "eager 2.0000 ms -> unreliable: 0.80x-5.00x between quartiles (median 2.00x)" in text
    assert "speedup unreliable: the timings' own spread is wider than a factor 1.5" in text
