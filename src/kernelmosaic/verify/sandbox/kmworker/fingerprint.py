"""Cheap fingerprints of outputs: a float64 projection onto seeded Gaussian weights plus NaN/±inf counts.

Every timed call's output is fingerprinted right after the call; the parent later picks calls at random and
asks the reference worker for the fingerprints of the same inputs (same seeds). The reference side also returns
the weighted moments the parent needs to bound honest rounding (Σw², Σw²|r|, Σw²r²).
"""

from __future__ import annotations

import torch

__all__ = ["Fingerprinter"]


class Fingerprinter:
    """Weights per (output index, size) for one seed, drawn once on the device and reused for every call."""

    def __init__(self, seed: int, device: str) -> None:
        self.seed, self.device = seed, device
        self._weights: dict[tuple[int, int], torch.Tensor] = {}

    def _w(self, index: int, numel: int) -> torch.Tensor:
        key = (index, numel)
        if key not in self._weights:
            gen = torch.Generator(device=self.device).manual_seed(self.seed + 7 * index)
            self._weights[key] = torch.randn(numel, generator=gen, device=self.device, dtype=torch.float64)
        return self._weights[key]

    def __call__(self, out, moments: bool = False) -> list[dict]:
        items = list(out) if isinstance(out, tuple) else [out]
        prints = [{"tuple": isinstance(out, tuple)}]
        for i, x in enumerate(items):
            if type(x) is not torch.Tensor:
                prints.append({"type": type(x).__name__})
                continue
            v = x.detach().reshape(-1).to(self.device, torch.float64)
            w = self._w(i, v.numel())
            finite = torch.isfinite(v)
            vals = torch.where(finite, v, torch.zeros((), dtype=torch.float64, device=v.device))
            fp = {"type": "Tensor", "shape": list(x.shape), "dtype": str(x.dtype).removeprefix("torch."),
                  "dot": float(torch.dot(w, vals)), "nan": int(torch.isnan(v).sum()),
                  "posinf": int((v == float("inf")).sum()), "neginf": int((v == float("-inf")).sum())}
            if moments:
                w2 = w * w
                fp.update(w2=float(w2.sum()), w2abs=float(torch.dot(w2, vals.abs())), w2sq=float(torch.dot(w2, vals * vals)))
            prints.append(fp)
        return prints
