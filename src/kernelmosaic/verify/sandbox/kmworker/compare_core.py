"""The comparison math, one definition for both sides: the trusted parent (`verify/compare.py`, on packaged outputs
that crossed the socket) and the reference worker (large outputs compared where they lie, `kmworker/reference.py`).

With a float64 oracle (`kmworker.oracle`) an element passes when its distance to the oracle is within

    atol + rtol·|oracle| + max(TERM_FACTOR · u · terms, REF_FACTOR · |fp32 reference − oracle|)

where u = 2^-24 (fp32 accumulation) and `terms` is Σ|∂f/∂z · z| over every input and weight (the magnitude of
what was summed, not of the result). The bound grows with the computation: a sum of 4096 terms carries up to
~u·Σ|x| of honest rounding in any order of summation, which a fixed tolerance against an fp32 reference that
summed in another order does not allow. Without an oracle the fp32 reference and (atol, rtol) alone decide.
The worker side imports the standard library and torch only; statuses are the verdict's status values as strings.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch

__all__ = ["CoreComparison", "compare_packaged", "chunk_for", "UNIT_ROUNDOFF", "TERM_FACTOR", "REF_FACTOR", "CHUNK",
           "DEVICE_CHUNK", "ACCEPTED", "SHAPE_MISMATCH", "DTYPE_MISMATCH", "OUTPUT_MISMATCH"]

ACCEPTED, SHAPE_MISMATCH, DTYPE_MISMATCH, OUTPUT_MISMATCH = "accepted", "shape_mismatch", "dtype_mismatch", "output_mismatch"
"""The `Status` values a comparison can end in (contracts/verdict.py names them; the parent maps them back)."""


@dataclass
class CoreComparison:
    status: str
    detail: str
    max_abs: float = 0.0
    max_rel: float = 0.0
    budget_used: float = 0.0
    """Worst |got − oracle| / allowed over all elements (1.0 = at the limit)."""
    reference_budget_used: float = 0.0
    """The same for the fp32 reference itself: what honest arithmetic used of the budget."""
    extra: list[float] = field(default_factory=list)
    """Per output: the largest budget above atol + rtol·|oracle| (the terms' and the reference's share)."""

    def as_dict(self) -> dict:
        """Plain data for a worker's reply."""
        return {"status": self.status, "detail": self.detail, "max_abs": self.max_abs, "max_rel": self.max_rel,
                "budget_used": self.budget_used, "reference_budget_used": self.reference_budget_used,
                "extra": list(self.extra)}


UNIT_ROUNDOFF = 2.0**-24
TERM_FACTOR = 16.0
"""Honest sequential fp32 summation of n random terms errs by ~0.9·u·Σ|x| (one standard deviation); 16 leaves room
for the worst of many elements and for a term estimate that came out low, while a term computed in TF32 (2^-11)
or an fp16 accumulator still errs by far more on any sum of more than a few terms."""
REF_FACTOR = 4.0
"""A candidate may be this many times further from float64 than the fp32 reference is, element by element."""


def _tensor(packaged: dict | None, i: int, like: torch.Tensor) -> torch.Tensor | None:
    """Output i of an oracle package when it matches `like` in shape, as float64."""
    if not packaged or i >= len(packaged["tensors"]):
        return None
    t = packaged["tensors"][i]
    return t.double() if t.is_floating_point() and t.shape == like.shape else None


CHUNK = 1 << 14
"""Elements compared per pass. A dozen float64 temporaries of this size stay in L2, where whole-output ones (16M
elements: 128 MB each) kept one call memory-bound for seconds. Below ATen's parallel grain (32768 elements) every
op runs on the calling thread: no hand-off to intra-op threads, which on a busy host (compiles, other judges) cost
seconds over thousands of small ops; the judges of several devices already run side by side."""


DEVICE_CHUNK = 1 << 24
"""Elements per pass on a GPU: every pass costs a dozen kernel launches and a few host syncs, so a 1G-element output
is compared in 64 passes rather than 65,536; its float64 temporaries (128 MB each) fit beside the outputs."""


def chunk_for(t: torch.Tensor) -> int:
    return CHUNK if t.device.type == "cpu" else DEVICE_CHUNK


@dataclass
class _Scan:
    """One floating output's comparison, gathered chunk by chunk in flat order."""

    nan_mismatch: int = 0
    worst_abs: float = 0.0
    worst_rel: float = 0.0
    used: float = 0.0
    ref_used: float = 0.0
    extra: float = 0.0
    bad: int = 0
    first: tuple[int, float, float, float] | None = None
    """The first element outside the budget: flat index, got, center, allowed."""


def _finite_max(t: torch.Tensor) -> float:
    """Largest finite element, 0.0 when there is none; one reduction when the maximum is itself finite."""
    if not t.numel():
        return 0.0
    m = float(t.max())
    if math.isfinite(m):
        return m
    m = float(t.masked_fill(~torch.isfinite(t), float("-inf")).max())  # not t[mask]: its index is 2x the chunk
    return m if math.isfinite(m) else 0.0


def _all_finite(t: torch.Tensor) -> bool:
    """No inf or NaN in `t`: both make the sum inf or NaN (a finite sum that overflows only answers False)."""
    return math.isfinite(float(t.sum()))


def _scan_chunk(scan: _Scan, start: int, r: torch.Tensor, g: torch.Tensor, o: torch.Tensor | None,
                terms: torch.Tensor | None, atol: float, rtol: float) -> None:
    """Fold elements [start, start + len(r)) into `scan`. Every float64 value is computed by the same operations in
    the same order as the whole-tensor formula (tests/verify/compare_reference.py), so the results are identical."""
    r64, g64 = r.double(), g.double()  # views when already float64: never written to
    plain = _all_finite(r64) and _all_finite(g64)  # most chunks: no NaN or inf to match up
    nan_r = None if plain else torch.isnan(r64)
    if nan_r is not None and (scan.nan_mismatch or not torch.equal(nan_r, torch.isnan(g64))):
        scan.nan_mismatch += int((nan_r != torch.isnan(g64)).sum())
    if scan.nan_mismatch:
        return  # a NaN mismatch anywhere decides the output; the rest only counts them
    center, extra = r64, None
    if o is not None:
        usable = None if plain and _all_finite(o) else torch.isfinite(r64) & torch.isfinite(o)
        center = o if usable is None else torch.where(usable, o, r64)
        extra = torch.sub(r64, o).abs_().nan_to_num_(0.0, posinf=0.0).mul_(REF_FACTOR)
        if terms is not None:
            term_err = torch.nan_to_num(terms, 0.0, posinf=0.0).mul_(TERM_FACTOR * UNIT_ROUNDOFF)
            torch.maximum(extra, term_err, out=extra)
        if usable is not None:
            extra.masked_fill_(~usable, 0.0)
        scan.extra = max(scan.extra, _finite_max(extra))
    scale = center.abs()
    allowed = torch.nan_to_num(scale, 0.0, posinf=0.0).mul_(rtol).add_(atol)
    if extra is not None:
        allowed.add_(extra)
    diff = torch.sub(center, g64).abs_().nan_to_num_(0.0, posinf=math.inf)
    worst = float(diff.max())  # diff holds no NaN
    all_finite = math.isfinite(worst) and math.isfinite(float(scale.max()))  # max() is NaN where any element is
    scan.worst_abs = max(scan.worst_abs, worst if math.isfinite(worst) else _finite_max(diff))
    # Elements where diff or center is inf or NaN are left out of the maxima and of `bad`; an inf in only one
    # output (or of opposite signs) always makes diff inf, so a chunk whose diff and center are finite has neither.
    finite = None if all_finite else torch.isfinite(diff) & torch.isfinite(center)
    rel = torch.div(diff, scale.clamp_min_(1e-12), out=scale).masked_fill_(diff <= atol, 0.0)
    scan.worst_rel = max(scan.worst_rel, _finite_max(rel))
    bad = torch.gt(diff, allowed)
    ratio = torch.div(diff, allowed, out=diff)  # diff is not needed past here
    if finite is not None:
        ratio.masked_fill_(~finite, 0.0)
        bad &= finite
        if nan_r is not None:
            bad |= (torch.isinf(r64) | torch.isinf(g64)) & (r64 != g64) & ~nan_r
    scan.used = max(scan.used, _finite_max(ratio))
    if o is not None:
        ratio = torch.sub(r64, center).abs_().div_(allowed)
        if finite is not None:
            ratio.masked_fill_(~finite, 0.0)
        scan.ref_used = max(scan.ref_used, _finite_max(ratio))
    count = int(bad.sum())
    if count and scan.first is None:
        k = int(bad.nonzero()[0])
        scan.first = (start + k, float(g64[k]), float(center[k]), float(allowed[k]))
    scan.bad += count


def compare_packaged(ref: dict, got: dict, atol: float, rtol: float, oracle: dict | None = None,
                     chunk: int | None = None) -> CoreComparison:
    """`ref`: the fp32 (task-precision) reference; `oracle`: {"outputs64", "terms"} from `kmworker.oracle` (or
    None). Shape, dtype, device and NaN positions must match the reference exactly; values must fall within the
    error budget of the module docstring. `chunk`: elements per pass (default by the tensors' device, `chunk_for`);
    the result does not depend on it."""
    if ref["tuple"] != got["tuple"] or len(ref["meta"]) != len(got["meta"]):
        return CoreComparison(SHAPE_MISMATCH,
                          f"returned {len(got['meta'])} output(s){' as a tuple' if got['tuple'] else ''}, "
                          f"expected {len(ref['meta'])}{' as a tuple' if ref['tuple'] else ''}")
    worst_abs = worst_rel = used = ref_used = 0.0
    extras: list[float] = []
    for i, (rm, gm, r, g) in enumerate(zip(ref["meta"], got["meta"], ref["tensors"], got["tensors"], strict=True)):
        where = f"output {i}"
        if gm.get("type") != "Tensor":
            return CoreComparison(DTYPE_MISMATCH, f"{where} is a {gm.get('type')}, not a plain torch.Tensor")
        if gm["shape"] != rm["shape"]:
            return CoreComparison(SHAPE_MISMATCH, f"{where} has shape {gm['shape']}, expected {rm['shape']}")
        if gm["dtype"] != rm["dtype"]:
            return CoreComparison(DTYPE_MISMATCH, f"{where} has dtype {gm['dtype']}, expected {rm['dtype']}")
        if gm["device"] != rm["device"]:
            return CoreComparison(DTYPE_MISMATCH, f"{where} is on {gm['device']}, expected {rm['device']}")
        if not r.is_floating_point():
            if not torch.equal(r, g):
                bad = int((r != g).sum())
                return CoreComparison(OUTPUT_MISMATCH, f"{where}: {bad} of {r.numel()} elements differ")
            extras.append(0.0)
            continue
        if g.shape != r.shape:  # the described shapes matched; the tensors themselves must too
            return CoreComparison(SHAPE_MISMATCH, f"{where} holds shape {list(g.shape)}, expected {list(r.shape)}")
        o64 = _tensor(oracle and oracle.get("outputs64"), i, r)
        terms = _tensor(oracle.get("terms"), i, r) if o64 is not None else None
        scan = _Scan()
        flat = [t.reshape(-1) if t is not None else None for t in (r, g, o64, terms)]
        step = chunk or chunk_for(r)
        for start in range(0, r.numel(), step):
            _scan_chunk(scan, start, *[t[start:start + step] if t is not None else None for t in flat],
                        atol=atol, rtol=rtol)
        if scan.nan_mismatch:
            return CoreComparison(OUTPUT_MISMATCH, f"{where}: {scan.nan_mismatch} element(s) NaN in one output but "
                              "not the other (uninitialised memory reads NaN here)")
        extras.append(scan.extra)
        worst_abs, worst_rel = max(worst_abs, scan.worst_abs), max(worst_rel, scan.worst_rel)
        used, ref_used = max(used, scan.used), max(ref_used, scan.ref_used)
        if scan.first is not None:
            idx, got_at, center_at, allowed_at = scan.first
            pos = list(torch.unravel_index(torch.tensor(idx), r.shape)) if r.dim() else []
            against = "float64 oracle" if o64 is not None else "reference"
            missing = (oracle or {}).get("terms_missing") if o64 is not None and terms is None else None
            note = (f" (no estimate of the terms' magnitude: {missing}; the budget is {REF_FACTOR:g}x the fp32 "
                    "reference's own error there)") if missing else ""
            return CoreComparison(OUTPUT_MISMATCH,
                              f"{where}: {scan.bad} of {r.numel()} elements outside the error budget; first at "
                              f"{[int(p) for p in pos]}: got {got_at:.6g}, {against} {center_at:.6g}, "
                              f"allowed ±{allowed_at:.3g}{note}",
                              worst_abs, worst_rel, used, ref_used, extras)
    return CoreComparison(ACCEPTED, "", worst_abs, worst_rel, used, ref_used, extras)
