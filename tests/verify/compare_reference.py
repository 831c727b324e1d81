"""`compare_outputs` as it was before the chunked rewrite (commit 8fed087): whole-tensor float64 temporaries, one
straightforward expression per quantity. Kept as the reference the fast version must match exactly
(test_compare_equivalence.py) and as the baseline of scripts/bench/bench_compare.py."""

from __future__ import annotations

import torch

from kernelmosaic.contracts.verdict import Status
from kernelmosaic.verify.compare import REF_FACTOR, TERM_FACTOR, UNIT_ROUNDOFF, Comparison, _tensor

__all__ = ["reference_compare_outputs"]


def _finite_max(t: torch.Tensor) -> float:
    t = t[torch.isfinite(t)]
    return float(t.max()) if t.numel() else 0.0


def reference_compare_outputs(ref: dict, got: dict, atol: float, rtol: float, oracle: dict | None = None) -> Comparison:
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
