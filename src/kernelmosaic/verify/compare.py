"""Trusted comparison of packaged outputs (from `kmworker.common.package_outputs`) against the reference's.

With a float64 oracle (`kmworker.oracle`) an element passes when its distance to the oracle is within

    atol + rtol·|oracle| + max(TERM_FACTOR · u · terms, REF_FACTOR · |fp32 reference − oracle|)

where u = 2^-24 (fp32 accumulation) and `terms` is Σ|∂f/∂z · z| over every input and weight (the magnitude of
what was summed, not of the result). The bound grows with the computation: a sum of 4096 terms carries up to
~u·Σ|x| of honest rounding in any order of summation, which a fixed tolerance against an fp32 reference that
summed in another order does not allow. Without an oracle the fp32 reference and (atol, rtol) alone decide.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from kernelmosaic.verify.verdict import Status

__all__ = ["Comparison", "compare_outputs", "output_nbytes", "UNIT_ROUNDOFF", "TERM_FACTOR", "REF_FACTOR"]

UNIT_ROUNDOFF = 2.0**-24
TERM_FACTOR = 16.0
"""Honest sequential fp32 summation of n random terms errs by ~0.9·u·Σ|x| (one standard deviation); 16 leaves room
for the worst of many elements and for a term estimate that came out low, while a term computed in TF32 (2^-11)
or an fp16 accumulator still errs by far more on any sum of more than a few terms."""
REF_FACTOR = 4.0
"""A candidate may be this many times further from float64 than the fp32 reference is, element by element."""


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


def _finite_max(t: torch.Tensor) -> float:
    t = t[torch.isfinite(t)]
    return float(t.max()) if t.numel() else 0.0


def _tensor(packaged: dict | None, i: int, like: torch.Tensor) -> torch.Tensor | None:
    """Output i of an oracle package when it matches `like` in shape, as float64."""
    if not packaged or i >= len(packaged["tensors"]):
        return None
    t = packaged["tensors"][i]
    return t.double() if t.is_floating_point() and t.shape == like.shape else None


def compare_outputs(ref: dict, got: dict, atol: float, rtol: float, oracle: dict | None = None) -> Comparison:
    """`ref`: the fp32 (task-precision) reference; `oracle`: {"outputs64", "terms"} from `kmworker.oracle` (or
    None). Shape, dtype, device and NaN positions must match the reference exactly; values must fall within the
    error budget of the module docstring."""
    if ref["tuple"] != got["tuple"] or len(ref["meta"]) != len(got["meta"]):
        return Comparison(Status.shape_mismatch,
                          f"returned {len(got['meta'])} output(s){' as a tuple' if got['tuple'] else ''}, "
                          f"expected {len(ref['meta'])}{' as a tuple' if ref['tuple'] else ''}")
    worst_abs = worst_rel = used = ref_used = 0.0
    extras: list[float] = []
    for i, (rm, gm, r, g) in enumerate(zip(ref["meta"], got["meta"], ref["tensors"], got["tensors"], strict=True)):
        where = f"output {i}"
        if gm.get("type") != "Tensor":
            return Comparison(Status.dtype_mismatch, f"{where} is a {gm.get('type')}, not a plain torch.Tensor")
        if gm["shape"] != rm["shape"]:
            return Comparison(Status.shape_mismatch, f"{where} has shape {gm['shape']}, expected {rm['shape']}")
        if gm["dtype"] != rm["dtype"]:
            return Comparison(Status.dtype_mismatch, f"{where} has dtype {gm['dtype']}, expected {rm['dtype']}")
        if gm["device"] != rm["device"]:
            return Comparison(Status.dtype_mismatch, f"{where} is on {gm['device']}, expected {rm['device']}")
        if not r.is_floating_point():
            if not torch.equal(r, g):
                bad = int((r != g).sum())
                return Comparison(Status.output_mismatch, f"{where}: {bad} of {r.numel()} elements differ")
            extras.append(0.0)
            continue
        r64, g64 = r.double(), g.double()
        nan_r, nan_g = torch.isnan(r64), torch.isnan(g64)
        if not torch.equal(nan_r, nan_g):
            n = int((nan_r != nan_g).sum())
            return Comparison(Status.output_mismatch, f"{where}: {n} element(s) NaN in one output but not the other "
                              "(uninitialised memory reads NaN here)")
        center, extra = r64, torch.zeros_like(r64)
        o64 = _tensor(oracle and oracle.get("outputs64"), i, r64)
        if o64 is not None:
            usable = torch.isfinite(r64) & torch.isfinite(o64)
            center = torch.where(usable, o64, r64)
            ref_err = (r64 - o64).abs().nan_to_num(0.0, posinf=0.0)
            terms = _tensor(oracle.get("terms"), i, r64)
            term_err = TERM_FACTOR * UNIT_ROUNDOFF * terms.nan_to_num(0.0, posinf=0.0) if terms is not None else extra
            extra = torch.where(usable, torch.maximum(REF_FACTOR * ref_err, term_err), extra)
        allowed = atol + rtol * center.abs().nan_to_num(0.0, posinf=0.0) + extra
        extras.append(_finite_max(extra) if extra.numel() else 0.0)
        diff = (center - g64).abs().nan_to_num(0.0, posinf=float("inf"))
        inf_mismatch = (torch.isinf(r64) | torch.isinf(g64)) & (r64 != g64) & ~nan_r
        finite = torch.isfinite(diff) & torch.isfinite(center)
        rel = diff / center.abs().clamp_min(1e-12)
        worst_abs = max(worst_abs, _finite_max(diff))
        worst_rel = max(worst_rel, _finite_max(rel.masked_fill(diff <= atol, 0.0)))
        used = max(used, _finite_max((diff / allowed).masked_fill(~finite, 0.0)))
        if o64 is not None:
            ref_used = max(ref_used, _finite_max(((r64 - center).abs() / allowed).masked_fill(~finite, 0.0)))
        bad = ((diff > allowed) & finite) | inf_mismatch
        if bad.any():
            idx = int(bad.flatten().nonzero()[0])
            pos = list(torch.unravel_index(torch.tensor(idx), r.shape)) if r.dim() else []
            against = "float64 oracle" if o64 is not None else "reference"
            return Comparison(Status.output_mismatch,
                              f"{where}: {int(bad.sum())} of {r.numel()} elements outside the error budget; first at "
                              f"{[int(p) for p in pos]}: got {float(g64.flatten()[idx]):.6g}, {against} "
                              f"{float(center.flatten()[idx]):.6g}, allowed ±{float(allowed.flatten()[idx]):.3g}",
                              worst_abs, worst_rel, used, ref_used, extras)
    return Comparison(Status.accepted, "", worst_abs, worst_rel, used, ref_used, extras)
