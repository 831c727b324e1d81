"""The statistics behind the metrics: bootstrap intervals over tasks, pass@k, quantiles and geometric means."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from kernelmosaic.evaluate.metrics import BOOTSTRAP_SAMPLES, BOOTSTRAP_SEED, CI_LEVEL, Distribution, Rate

__all__ = ["rate", "not_measured", "distribution", "pass_at_k_estimate", "mean_rate", "geomean"]


def not_measured(note: str) -> Rate:
    return Rate(measured=False, note=note)


def _interval(groups: Sequence[tuple[float, float]], stat: Callable[[np.ndarray, np.ndarray], float]) -> tuple[float, float]:
    """Percentile bootstrap: resample the groups (tasks) with replacement, BOOTSTRAP_SAMPLES times, fixed seed."""
    num = np.array([g[0] for g in groups], dtype=float)
    den = np.array([g[1] for g in groups], dtype=float)
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    picks = rng.integers(0, len(groups), size=(BOOTSTRAP_SAMPLES, len(groups)))
    values = np.array([stat(num[p], den[p]) for p in picks])
    alpha = (1.0 - CI_LEVEL) / 2
    return float(np.quantile(values, alpha)), float(np.quantile(values, 1 - alpha))


def _ratio(num: np.ndarray, den: np.ndarray) -> float:
    total = den.sum()
    return float(num.sum() / total) if total > 0 else 0.0


def rate(groups: dict[str, tuple[float, float]], empty_note: str) -> Rate:
    """Pooled proportion sum(num) / sum(den) over groups (one per task); the interval resamples the groups."""
    kept = [g for g in groups.values() if g[1] > 0]
    if not kept:
        return not_measured(empty_note)
    numerator, denominator = sum(g[0] for g in kept), sum(g[1] for g in kept)
    low, high = _interval(kept, _ratio)
    return Rate(numerator=numerator, denominator=denominator, value=numerator / denominator,
                ci_low=round(low, 6), ci_high=round(high, 6))


def mean_rate(values: dict[str, float], empty_note: str) -> Rate:
    """Mean of per-task values in [0, 1] (pass@k); the interval resamples the tasks."""
    if not values:
        return not_measured(empty_note)
    groups = [(v, 1.0) for v in values.values()]
    low, high = _interval(groups, _ratio)
    total = sum(values.values())
    return Rate(numerator=round(total, 9), denominator=float(len(values)), value=total / len(values),
                ci_low=round(low, 6), ci_high=round(high, 6))


def pass_at_k_estimate(n: int, c: int, k: int) -> float:
    """The unbiased estimator of Chen et al. (2021): the chance that k of the n samples include a correct one."""
    if k > n:
        raise ValueError(f"pass@{k} needs at least {k} samples, got {n}")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def geomean(values: Sequence[float]) -> float:
    if not values or any(v <= 0 for v in values):
        return 0.0
    return math.exp(sum(math.log(v) for v in values) / len(values))


def distribution(values: Sequence[float], empty_note: str) -> Distribution:
    if not values:
        return Distribution(measured=False, note=empty_note)
    arr = np.asarray(values, dtype=float)
    p10, p50, p90 = (float(x) for x in np.percentile(arr, [10, 50, 90]))
    return Distribution(n=len(values), p10=p10, p50=p50, p90=p90, mean=float(arr.mean()), geomean=geomean(values),
                        min=float(arr.min()), max=float(arr.max()), values=[float(v) for v in values])
