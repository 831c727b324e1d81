"""Trusted comparison of packaged outputs (from `kmworker.common.package_outputs`) against the reference's."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from kernelmosaic.verify.verdict import Status

__all__ = ["Comparison", "compare_outputs", "output_nbytes", "error_vs_float64"]


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

    @property
    def ok(self) -> bool:
        return self.status == Status.accepted


def _finite_max(t: torch.Tensor) -> float:
    t = t[torch.isfinite(t)]
    return float(t.max()) if t.numel() else 0.0


def compare_outputs(ref: dict, got: dict, atol: float, rtol: float) -> Comparison:
    if ref["tuple"] != got["tuple"] or len(ref["meta"]) != len(got["meta"]):
        return Comparison(Status.shape_mismatch,
                          f"returned {len(got['meta'])} output(s){' as a tuple' if got['tuple'] else ''}, "
                          f"expected {len(ref['meta'])}{' as a tuple' if ref['tuple'] else ''}")
    worst_abs = worst_rel = 0.0
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
            continue
        r64, g64 = r.double(), g.double()
        nan_r, nan_g = torch.isnan(r64), torch.isnan(g64)
        if not torch.equal(nan_r, nan_g):
            n = int((nan_r != nan_g).sum())
            return Comparison(Status.output_mismatch, f"{where}: {n} element(s) NaN in one output but not the other "
                              "(uninitialised memory reads NaN here)")
        diff = (r64 - g64).abs().nan_to_num(0.0, posinf=float("inf"))
        inf_mismatch = (torch.isinf(r64) | torch.isinf(g64)) & (r64 != g64) & ~nan_r
        rel = diff / r64.abs().clamp_min(1e-12)
        worst_abs = max(worst_abs, _finite_max(diff))
        worst_rel = max(worst_rel, _finite_max(rel.masked_fill(diff <= atol, 0.0)))
        bad = (diff > atol + rtol * r64.abs()) | inf_mismatch
        if bad.any():
            idx = int(bad.flatten().nonzero()[0])
            pos = list(torch.unravel_index(torch.tensor(idx), r.shape)) if r.dim() else []
            return Comparison(Status.output_mismatch,
                              f"{where}: {int(bad.sum())} of {r.numel()} elements outside tolerance; first at "
                              f"{[int(p) for p in pos]}: got {float(g64.flatten()[idx]):.6g}, "
                              f"expected {float(r64.flatten()[idx]):.6g}", worst_abs, worst_rel)
    return Comparison(Status.accepted, "", worst_abs, worst_rel)


def error_vs_float64(ref64: dict, got: dict, atol: float, rtol: float) -> float:
    """Worst error of `got` against the float64 reference, in units of the tolerance (1.0 = at the limit)."""
    worst = 0.0
    for r, g in zip(ref64["tensors"], got["tensors"], strict=False):
        if not (r.is_floating_point() and g.is_floating_point()) or r.shape != g.shape:
            continue
        r64, g64 = r.double(), g.double()
        finite = torch.isfinite(r64) & torch.isfinite(g64)
        if finite.any():
            scaled = (r64 - g64).abs()[finite] / (atol + rtol * r64.abs()[finite])
            worst = max(worst, float(scaled.max()))
    return worst
