"""Numbers the measurement does not support are said so: an unreliable speedup is marked and left out of the
headline distribution, a value never measured is null / "not measured" (never 0), exact errors stay on the plot."""

from __future__ import annotations

import json

import pytest
from test_metrics_by_hand import _episode, _verdict

from kernelmosaic.contracts.speedup import MAX_SPREAD, read_speedup
from kernelmosaic.contracts.verdict import Stat, Status
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
