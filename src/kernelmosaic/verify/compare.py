"""Trusted comparison of packaged outputs (from `kmworker.common.package_outputs`) against the reference's.

The math (the error budget against the float64 oracle) is defined once, in the worker package
(`kmworker/compare_core.py`), so that the reference worker compares large outputs where they lie by the very same
formula; this module gives its result the verdict's `Status`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kernelmosaic.contracts.verdict import Status
from kernelmosaic.verify.sandbox.kmworker.compare_core import (
    CHUNK,
    REF_FACTOR,
    TERM_FACTOR,
    UNIT_ROUNDOFF,
    CoreComparison,
    compare_packaged,
)
from kernelmosaic.verify.sandbox.kmworker.compare_core import (
    _tensor as _tensor,  # for tests/verify/compare_reference.py, which checks the chunked scan against it
)

__all__ = ["Comparison", "compare_outputs", "from_core", "output_nbytes", "UNIT_ROUNDOFF", "TERM_FACTOR", "REF_FACTOR",
           "CHUNK"]

_ITEMSIZE = {"float64": 8, "int64": 8, "complex64": 8, "float32": 4, "int32": 4, "float16": 2, "bfloat16": 2,
             "int16": 2, "bool": 1, "int8": 1, "uint8": 1}


def output_nbytes(packaged: dict) -> list[int]:
    """Byte size of each tensor output, from its described shape and dtype (non-tensors count 0)."""
    sizes = []
    for meta in packaged["meta"]:
        n = 1
        for d in meta.get("shape", []):
            n *= d
        sizes.append(n * _ITEMSIZE.get(meta.get("dtype", ""), 4) if meta.get("type") == "Tensor" else 0)
    return sizes


@dataclass
class Comparison:
    status: Status
    detail: str
    max_abs: float = 0.0
    max_rel: float = 0.0
    budget_used: float = 0.0
    """Worst |got − oracle| / allowed over all elements (1.0 = at the limit)."""
    reference_budget_used: float = 0.0
    """The same for the fp32 reference itself: what honest arithmetic used of the budget."""
    extra: list[float] = field(default_factory=list)
    """Per output: the largest budget above atol + rtol·|oracle| (the terms' and the reference's share)."""

    @property
    def ok(self) -> bool:
        return self.status == Status.accepted


def from_core(core: CoreComparison | dict) -> Comparison:
    """A core comparison (or its `as_dict()`, from a worker's reply) with its status as the verdict's `Status`. A
    reply's fields are read by name and typed here: a status that is not a comparison's own is an error."""
    d = core.as_dict() if isinstance(core, CoreComparison) else core
    status = Status(str(d["status"]))
    if status not in (Status.accepted, Status.shape_mismatch, Status.dtype_mismatch, Status.output_mismatch):
        raise ValueError(f"not a comparison's status: {status}")
    return Comparison(status, str(d["detail"]), float(d["max_abs"]), float(d["max_rel"]), float(d["budget_used"]),
                      float(d["reference_budget_used"]), [float(x) for x in d["extra"]])


def compare_outputs(ref: dict, got: dict, atol: float, rtol: float, oracle: dict | None = None) -> Comparison:
    """`ref`: the fp32 (task-precision) reference; `oracle`: {"outputs64", "terms"} from `kmworker.oracle` (or
    None). Shape, dtype, device and NaN positions must match the reference exactly; values must fall within the
    error budget (`kmworker/compare_core.py`)."""
    return from_core(compare_packaged(ref, got, atol, rtol, oracle))

