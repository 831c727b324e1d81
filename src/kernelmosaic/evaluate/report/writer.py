"""`report.html` (one file, plots embedded), `summary.json`, `summary.md`, and per-episode artifacts it links to."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import jinja2

from kernelmosaic.evaluate.metrics import BOOTSTRAP_SAMPLES, EvalSummary, GateMetrics, Rate
from kernelmosaic.evaluate.report import plots
from kernelmosaic.evaluate.report.markdown import summary_markdown
from kernelmosaic.evaluate.report.rows import GATE_ROWS, format_rate
from kernelmosaic.store import Store

__all__ = ["write_report"]

_TEMPLATES = Path(__file__).parent / "templates"


def _artifacts(store: Store, summary: EvalSummary, out: Path) -> dict[int, dict[str, str]]:
    """Write each counted episode's answer, its latest verdict and its trajectory; returns relative links."""
    links: dict[int, dict[str, str]] = {}
    for row in summary.tasks:
        folder = Path("artifacts") / f"run-{summary.run.id}" / f"episode-{row.episode_id}"
        (out / folder).mkdir(parents=True, exist_ok=True)
        trajectory = store.load_trajectory(row.episode_id)
        (out / folder / "trajectory.json").write_text(trajectory.to_json(), encoding="utf-8")
        entry = {"trajectory": (folder / "trajectory.json").as_posix(), "kernel": "", "verdict": ""}
        source = next((e.call.arguments.get("source", "") for e in trajectory.events
                       if e.type == "tool_call" and e.call.name == "write_candidate"
                       and _sha(e.call.arguments.get("source", "")) == row.candidate_sha256), "")
        if source:
            (out / folder / "kernel.py").write_text(source, encoding="utf-8")
            entry["kernel"] = (folder / "kernel.py").as_posix()
        verdicts = [e.verdict for e in trajectory.events if e.type == "tool_result" and e.verdict is not None
                    and e.candidate_sha256 == row.candidate_sha256]
        if verdicts:
            (out / folder / "verdict.json").write_text(verdicts[-1].to_json(), encoding="utf-8")
            entry["verdict"] = (folder / "verdict.json").as_posix()
        links[row.episode_id] = entry
    return links


def _sha(source: str) -> str:
    from kernelmosaic.store import candidate_sha256

    return candidate_sha256(str(source))


def _fast1(m: GateMetrics) -> Rate:
    return next(f.rate for f in m.fast_p if f.p == 1.0 and f.baseline == "eager" and f.time == "device")


def write_report(store: Store, summaries: Sequence[EvalSummary], out: Path) -> Path:
    """Write the report of `summaries` (the first is the run, the others its comparisons) into `out`."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    links = {s.run.id: _artifacts(store, s, out) for s in summaries}
    figures = [("fast_p curves (device time; solid: vs eager, dashed: vs torch.compile)", plots.fast_p_curves(summaries)),
               ("speedup distributions of correct answers", plots.speedup_distributions(summaries)),
               ("correct rate per level (95% CI)", plots.group_bars(summaries, "by_level")),
               ("correct rate per category (95% CI)", plots.group_bars(summaries, "by_category")),
               ("max abs error of the answers", plots.error_histogram(summaries)),
               ("runs side by side (95% CI)", plots.comparison(summaries))]
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(_TEMPLATES), autoescape=True,
                             undefined=jinja2.StrictUndefined)
    html = env.get_template("report.html.j2").render(
        runs=list(summaries), plots=figures, links=links, bootstrap=BOOTSTRAP_SAMPLES, fast1=_fast1,
        gate_rows=GATE_ROWS, rate=format_rate)
    (out / "report.html").write_text(html, encoding="utf-8")
    data = {"schema": "kernelmosaic.eval-report/1",
            "runs": [s.model_dump(mode="json", by_alias=True) for s in summaries]}
    (out / "summary.json").write_text(json.dumps(data, indent=1, allow_nan=False), encoding="utf-8")
    (out / "summary.md").write_text(summary_markdown(summaries), encoding="utf-8")
    return out / "report.html"
