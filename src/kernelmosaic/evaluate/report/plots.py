"""The report's plots (matplotlib, Agg), each returned as a base64 PNG ready to embed in an <img> tag.

Every plot draws from `EvalSummary` objects only; a run is one colour across all plots.
"""

from __future__ import annotations

import base64
import io
import math
from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from kernelmosaic.evaluate.metrics import EvalSummary, GateMetrics, Rate  # noqa: E402

__all__ = ["ERROR_FLOOR", "fast_p_curves", "speedup_distributions", "group_bars", "error_histogram", "comparison",
           "label"]

ERROR_FLOOR = 1e-12
"""Errors below this (exact answers: 0) are drawn at it on the log-scale error histogram, and counted on its axis."""


def label(summary: EvalSummary) -> str:
    return f"run {summary.run.id} ({summary.run.mode}, {summary.run.model or 'no model'})"[:60]


def _png(fig) -> str:
    buffer = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buffer, format="png", dpi=90)
    plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def fast_p_curves(summaries: Sequence[EvalSummary]) -> str:
    """fast_p over a continuous p (the same definition as the table, evaluated on a grid), eager and compile."""
    fig, ax = plt.subplots(figsize=(7, 4))
    top = max([3.0] + [r.speedup_eager for s in summaries for r in s.tasks if r.speedup_eager is not None])
    grid = [top * i / 200 for i in range(201)]
    for n, s in enumerate(summaries):
        color = f"C{n}"
        total = len(s.tasks) or 1
        for field, style, name in (("speedup_eager", "-", "vs eager"), ("speedup_compile", "--", "vs torch.compile")):
            values = [getattr(r, field) for r in s.tasks if r.correct and (getattr(r, field) or 0.0) > 0]
            if not values:
                continue
            ax.plot(grid, [sum(v > p for v in values) / total for p in grid], style, color=color,
                    label=f"{label(s)} {name}")
    for p in (1.0, 1.5, 2.0):
        ax.axvline(p, color="0.8", lw=0.8)
    ax.set_xlabel("speedup threshold p (device time)")
    ax.set_ylabel("fast_p (share of episodes)")
    ax.set_ylim(0, 1.02)
    if ax.get_legend_handles_labels()[0]:  # no curve when no episode has a speedup
        ax.legend(fontsize=7)
    return _png(fig)


def speedup_distributions(summaries: Sequence[EvalSummary]) -> str:
    fig, ax = plt.subplots(figsize=(7, 4))
    data, names = [], []
    for s in summaries:
        for key in ("eager_device", "compile_device", "eager_host", "compile_host"):
            dist = s.overall.speedup.get(key)
            if dist is not None and dist.measured:
                data.append([math.log2(v) for v in dist.values])
                names.append(f"run {s.run.id}\n{key.replace('_', ' ')}")
    if data:
        ax.boxplot(data, showfliers=True)
        ax.set_xticks(range(1, len(names) + 1), names, fontsize=7)
    else:
        ax.text(0.5, 0.5, "no correct, timed answer", ha="center", transform=ax.transAxes)
    ax.axhline(0, color="0.6", lw=0.8)
    ax.set_ylabel("log2 speedup (0 = as fast as the baseline)")
    return _png(fig)


def _bars(ax, groups: Sequence[str], per_run: Sequence[dict[str, GateMetrics]], names: Sequence[str]) -> None:
    width = 0.8 / max(1, len(per_run))
    for n, (metrics, name) in enumerate(zip(per_run, names, strict=True)):
        xs, ys, errs = [], [], [[], []]
        for i, group in enumerate(groups):
            rate: Rate | None = metrics[group].correct if group in metrics else None
            if rate is None or not rate.measured:
                continue
            xs.append(i + n * width)
            ys.append(rate.value)
            errs[0].append(max(0.0, rate.value - rate.ci_low))
            errs[1].append(max(0.0, rate.ci_high - rate.value))
        ax.bar(xs, ys, width, yerr=errs, capsize=3, color=f"C{n}", label=name)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(groups))], groups, fontsize=7, rotation=30)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("correct (95% CI)")


def group_bars(summaries: Sequence[EvalSummary], by: str) -> str:
    """Correct rate per level (`by_level`) or per category (`by_category`), runs side by side."""
    per_run = [getattr(s, by) for s in summaries]
    groups = sorted({g for metrics in per_run for g in metrics})
    fig, ax = plt.subplots(figsize=(7, 3.6))
    _bars(ax, groups, per_run, [label(s) for s in summaries])
    ax.legend(fontsize=7)
    return _png(fig)


def error_histogram(summaries: Sequence[EvalSummary]) -> str:
    fig, ax = plt.subplots(figsize=(7, 3.4))
    drawn = zeros = 0
    for n, s in enumerate(summaries):
        # an exact answer (error 0) has no logarithm: it is drawn at the floor, and the axis says how many are
        values = [math.log10(max(v, ERROR_FLOOR)) for v in s.overall.max_abs_error.values]
        zeros += sum(v < ERROR_FLOOR for v in s.overall.max_abs_error.values)
        if values:
            ax.hist(values, bins=20, alpha=0.6, color=f"C{n}", label=label(s))
            drawn += 1
    if not drawn:
        ax.text(0.5, 0.5, "no answer ran its trials", ha="center", transform=ax.transAxes)
    else:
        ax.legend(fontsize=7)
    floor = f"; {zeros} error(s) below {ERROR_FLOOR:g} (exact answers included) drawn at {ERROR_FLOOR:g}" if zeros else ""
    ax.set_xlabel(f"log10 max abs error of the answer's latest verdict{floor}")
    ax.set_ylabel("episodes")
    return _png(fig)


def comparison(summaries: Sequence[EvalSummary]) -> str:
    """Headline rates of each run side by side with their 95% bootstrap intervals."""
    def fast(m: GateMetrics, p: float, baseline: str) -> Rate:
        return next(f.rate for f in m.fast_p if f.p == p and f.baseline == baseline and f.time == "device")

    picks = [("compile/interface", lambda m: m.gate1_compile), ("correct", lambda m: m.correct),
             ("fast_1 eager", lambda m: fast(m, 1.0, "eager")), ("fast_1 compile", lambda m: fast(m, 1.0, "compile")),
             ("fast_2 eager", lambda m: fast(m, 2.0, "eager"))]
    fig, ax = plt.subplots(figsize=(7, 3.6))
    width = 0.8 / max(1, len(summaries))
    for n, s in enumerate(summaries):
        for i, (_, pick) in enumerate(picks):
            rate = pick(s.overall)
            if not rate.measured:
                continue
            ax.bar(i + n * width, rate.value, width, color=f"C{n}", label=label(s) if i == 0 else None,
                   yerr=[[max(0.0, rate.value - rate.ci_low)], [max(0.0, rate.ci_high - rate.value)]], capsize=3)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(picks))], [p[0] for p in picks], fontsize=8)
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=7)
    return _png(fig)
