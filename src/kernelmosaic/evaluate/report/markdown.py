"""`summary.md`: the report's tables in Markdown (gates, fast_p, speedups, groups, reported-apart episodes)."""

from __future__ import annotations

from collections.abc import Sequence

from kernelmosaic.evaluate.metrics import EvalSummary
from kernelmosaic.evaluate.report.rows import GATE_ROWS, fast, format_distribution, format_rate

__all__ = ["summary_markdown"]


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(cell.replace("|", "/") for cell in row) + " |" for row in rows]


def summary_markdown(summaries: Sequence[EvalSummary]) -> str:
    runs = [f"run {s.run.id}" for s in summaries]
    out = ["# KernelMosaic evaluation", ""]
    for s in summaries:
        env = "; ".join(f"{e.device} {e.device_name or '?'} driver {e.driver or '-'} torch {e.torch} {e.precision}"
                        for e in s.run.env) or "no verdict"
        out.append(f"- run {s.run.id}: {s.run.mode}, model `{s.run.model}`, tasks `{s.run.task_source}`, "
                   f"policy {', '.join(s.run.policies) or '-'}, {s.overall.episodes} episodes counted, "
                   f"{sum(1 for t in s.tasks if t.model_failure)} of them model failures, {len(s.flagged)} reported apart; "
                   f"env: {env}")
    out += ["", "## Gates", ""]
    out += _table(["metric", *runs], [[name, *(fmt(get(s.overall)) for s in summaries)] for name, get, fmt in GATE_ROWS])
    out += ["", "## fast_p", ""]
    rows = []
    for f in summaries[0].overall.fast_p:
        rows.append([f.baseline, f.time, f"{f.p:g}", *(format_rate(fast(s.overall, f.p, f.baseline, f.time))
                                                       for s in summaries)])
    out += _table(["baseline", "time", "p", *runs], rows)
    out += ["", "## Speedups of correct answers", ""]
    out += _table(["speedup", *runs], [[key, *(format_distribution(s.overall.speedup[key]) for s in summaries)]
                                       for key in summaries[0].overall.speedup])
    for s in summaries:
        out += ["", f"## Run {s.run.id} by level and category", ""]
        groups = {**s.by_level, **s.by_category}
        out += _table(["group", "episodes", "compile/interface", "correct", "fast_1 eager"],
                      [[name, str(m.episodes), format_rate(m.gate1_compile), format_rate(m.correct),
                        format_rate(fast(m, 1.0))] for name, m in groups.items()])
        failed = [t for t in s.tasks if t.model_failure]
        out += ["", f"Model failures (counted as failed samples): {len(failed)}", ""]
        if failed:
            out += _table(["task", "sample", "failure", "status"],
                          [[t.task_id, str(t.sample), t.model_failure[:200], t.status] for t in failed])
        out += ["", f"Reported apart (never counted): {len(s.flagged)}", ""]
        if s.flagged:
            out += _table(["task", "sample", "why", "status"], [[f.task_id, str(f.sample), f.why, f.status] for f in s.flagged])
    return "\n".join(out) + "\n"
