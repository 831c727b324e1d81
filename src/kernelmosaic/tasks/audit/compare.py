"""Comparisons and statistics of outputs, in float64 chunks on the device that holds them. Standard library and torch.

The verdicts are those of a float64 comparison of whole tensors (`allclose` is elementwise, so chunks agree with it),
without a float64 copy of a whole output: a (4096, 393216) fp32 output is 6.4 GB, and a whole float64 copy of each
operand would add 25 GB to one audit.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import torch

__all__ = ["CHUNK", "abs_max", "close_enough", "fmt", "max_error", "mean", "std"]

CHUNK = 1 << 22
"""Elements per chunk: 32 MiB per float64 operand."""


def fmt(x: float) -> str:
    return "nan" if math.isnan(x) else ("inf" if math.isinf(x) else f"{x:.3g}")


def _chunks(t: torch.Tensor) -> Iterator[torch.Tensor]:
    flat = t.reshape(-1)  # a view when contiguous; else one copy in the output's own dtype
    for start in range(0, flat.numel(), CHUNK):
        yield flat[start : start + CHUNK].double()


def close_enough(a: torch.Tensor | float, b: torch.Tensor, atol: float, rtol: float) -> bool:
    """`allclose(a, b)` in float64, NaN equal to NaN; a number `a` stands for a tensor of `b`'s shape filled with it
    (the trivial outputs: zeros, the mean). Tensors must be on one device."""
    if isinstance(a, torch.Tensor):
        if a.shape != b.shape:
            return False
        pairs = zip(_chunks(a), _chunks(b), strict=True)
    else:
        pairs = ((torch.full_like(cb, a), cb) for cb in _chunks(b))
    return all(torch.allclose(ca, cb, atol=atol, rtol=rtol, equal_nan=True) for ca, cb in pairs)


def max_error(a: torch.Tensor, b: torch.Tensor) -> float:
    """Largest |a - b| where it is a number (NaN positions are skipped); inf when the shapes differ."""
    if a.shape != b.shape:
        return math.inf
    peak = 0.0
    for ca, cb in zip(_chunks(a), _chunks(b), strict=True):
        diff = (ca - cb).abs()
        diff = diff[~torch.isnan(diff)]
        if diff.numel():
            peak = max(peak, float(diff.max()))
    return peak


def abs_max(t: torch.Tensor, finite: bool = False) -> float:
    """Largest |t| skipping NaN (and inf too when `finite`); 0 for an empty tensor or one with nothing left."""
    peak = 0.0
    for c in _chunks(t):
        c = c.abs()
        c = c[torch.isfinite(c)] if finite else c[~torch.isnan(c)]
        if c.numel():
            peak = max(peak, float(c.max()))
    return peak


def mean(t: torch.Tensor) -> float:
    """The mean in float64 (NaN propagates; NaN for an empty tensor)."""
    return sum(float(c.sum()) for c in _chunks(t)) / t.numel() if t.numel() else math.nan


def std(t: torch.Tensor) -> float:
    """The unbiased standard deviation in float64, two passes over the chunks (NaN below two elements)."""
    if t.numel() < 2:
        return math.nan
    m = mean(t)
    return math.sqrt(sum(float(((c - m) ** 2).sum()) for c in _chunks(t)) / (t.numel() - 1))
