"""Numeric precisions a problem is judged in, and the tolerances of each: one definition for the verifier, the task
audit and evaluation."""

from __future__ import annotations

from typing import Literal

__all__ = ["Precision", "TOLERANCES"]

Precision = Literal["fp32", "fp16", "bf16"]

# (atol, rtol) per precision. fp32 is tight enough that a kernel silently computing in TF32 or
# half precision fails on inputs of non-trivial magnitude (see threat-model.md, precision honesty).
TOLERANCES: dict[str, tuple[float, float]] = {
    "fp32": (1e-4, 1e-4),
    "fp16": (1e-2, 1e-2),
    "bf16": (2e-2, 2e-2),
}
