"""How the report writes a metric: the gates table's rows and the formatting of rates, shared by HTML and Markdown."""

from __future__ import annotations

from kernelmosaic.evaluate.metrics import Distribution, GateMetrics, Rate
from kernelmosaic.evaluate.stats import not_measured

__all__ = ["format_rate", "format_per_solved", "format_distribution", "fast", "GATE_ROWS"]


def format_rate(rate: Rate) -> str:
    if not rate.measured:
        return f"not measured: {rate.note}"
    text = f"{100 * rate.value:.1f}% [{100 * rate.ci_low:.1f}–{100 * rate.ci_high:.1f}] ({rate.numerator:g}/{rate.denominator:g})"
    return f"{text}; {rate.note}" if rate.note else text


def format_per_solved(rate: Rate) -> str:
    if not rate.measured:
        return f"not measured: {rate.note}"
    return f"{rate.value:.4g} ({rate.numerator:.4g} over {rate.denominator:g} solved)"


def _pass_at(k: int):
    return lambda m: next((p.rate for p in m.pass_at_k if p.k == k), Rate(measured=False, note=f"fewer than {k} samples"))


def _cost(field: str):
    return lambda m: getattr(m.cost, field)


GATE_ROWS = [
    ("gate 1: compile/interface pass rate", lambda m: m.gate1_compile, format_rate),
    ("gate 1: first-compile pass rate", lambda m: m.first_compile, format_rate),
    ("gate 2: correct (verified)", lambda m: m.correct, format_rate),
    ("gate 2: pass rate across seeds", lambda m: m.seeds, format_rate),
    ("gate 2: pass rate across alternative shapes/dtypes", lambda m: m.alternatives, format_rate),
    ("gate 2: sanitizer pass rate", lambda m: m.sanitizer, format_rate),
    ("peak memory relative to the reference (candidate / reference)", lambda m: m.peak_memory,
     lambda d: format_distribution(d)),
    *[(f"pass@{k}", _pass_at(k), format_rate) for k in (1, 5, 10)],
    ("tokens per solved task", _cost("tokens"), format_per_solved),
    ("cost (USD) per solved task", _cost("cost_usd"), format_per_solved),
    ("GPU-seconds per solved task", _cost("gpu_seconds"), format_per_solved),
    ("wall seconds per solved task", _cost("wall_seconds"), format_per_solved),
]
"""(label, metric of a GateMetrics, formatter): the rows of the gates table, in the HTML and the Markdown."""


def format_distribution(d: Distribution) -> str:
    if not d.measured:
        return f"not measured: {d.note}"
    return f"n={d.n} p10 {d.p10:.3g} p50 {d.p50:.3g} p90 {d.p90:.3g} geomean {d.geomean:.3g}"


def fast(m: GateMetrics, p: float, baseline: str = "eager", time: str = "device") -> Rate:
    """The fast_p entry; not measured where the summary has none (one written before that entry existed)."""
    found = next((f.rate for f in m.fast_p if f.p == p and f.baseline == baseline and f.time == time), None)
    return found if found is not None else not_measured(f"this summary has no fast_{p:g} vs {baseline} by {time} time")
