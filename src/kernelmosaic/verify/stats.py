"""Summary statistics of timing samples."""

from __future__ import annotations

import statistics

from kernelmosaic.contracts.verdict import Stat

__all__ = ["summarize"]


def summarize(samples: list[float]) -> Stat:
    if not samples:
        raise ValueError("no timing samples")
    if len(samples) == 1:
        return Stat(median_ms=samples[0], q1_ms=samples[0], q3_ms=samples[0], samples=1)
    q1, med, q3 = statistics.quantiles(samples, n=4, method="inclusive")
    return Stat(median_ms=med, q1_ms=q1, q3_ms=q3, samples=len(samples), rel_iqr=round((q3 - q1) / med, 4) if med > 0 else 0.0)
