"""Cheap fingerprints of outputs: a float64 projection onto seeded Gaussian weights plus NaN/±inf counts.

Every timed call's output is fingerprinted right after the call; the parent later picks calls at random and
asks the reference worker for the fingerprints of the same inputs (same seeds). The reference side also returns
the weighted moments the parent needs to bound honest rounding (Σw², Σw²|r|, Σw²r²).
"""

from __future__ import annotations

import torch

__all__ = ["Fingerprinter", "flat_view"]


CHUNK = 1 << 24
"""Elements per pass: the float64 temporaries of a pass take 128 MiB each, whatever the output's size (whole, a
1G-element output's would take 8 GiB each, several at once, on every timed call)."""


def flat_view(x: torch.Tensor) -> torch.Tensor:
    """`x`'s elements as one flat tensor, a complex one's real and imaginary parts both (`view_as_real`): what the
    fingerprint and the burst's projections weigh."""
    return (torch.view_as_real(x.detach()) if x.is_complex() else x.detach()).reshape(-1)


class Fingerprinter:
    """Weights per (output index, size) for one seed, drawn once on the device and reused for every call. They are
    kept in float32 (4 bytes per output element, for the whole timing phase) and widened a pass at a time; every
    sum is accumulated in float64, in the same order on every side."""

    def __init__(self, seed: int, device: str) -> None:
        self.seed, self.device = seed, device
        self._weights: dict[tuple[int, int], torch.Tensor] = {}

    def _w(self, index: int, numel: int) -> torch.Tensor:
        key = (index, numel)
        if key not in self._weights:
            gen = torch.Generator(device=self.device).manual_seed(self.seed + 7 * index)
            self._weights[key] = torch.randn(numel, generator=gen, device=self.device, dtype=torch.float32)
        return self._weights[key]

    def __call__(self, out, moments: bool = False) -> list[dict]:
        items = list(out) if isinstance(out, tuple) else [out]
        prints = [{"tuple": isinstance(out, tuple)}]
        for i, x in enumerate(items):
            if type(x) is not torch.Tensor:
                prints.append({"type": type(x).__name__})
                continue
            flat = flat_view(x)
            w = self._w(i, flat.numel())
            sums = torch.zeros(7, dtype=torch.float64, device=self.device)  # dot, nan, +inf, -inf, then moments
            for start in range(0, flat.numel(), CHUNK):
                v = flat[start:start + CHUNK].to(self.device, torch.float64)
                wc = w[start:start + CHUNK].double()
                finite = torch.isfinite(v)
                vals = torch.where(finite, v, torch.zeros((), dtype=torch.float64, device=v.device))
                sums[0] += torch.dot(wc, vals)
                sums[1] += torch.isnan(v).sum()
                sums[2] += (v == float("inf")).sum()
                sums[3] += (v == float("-inf")).sum()
                if moments:
                    w2 = wc.mul_(wc)
                    sums[4] += w2.sum()
                    sums[5] += torch.dot(w2, vals.abs())
                    sums[6] += torch.dot(w2, vals.mul_(vals))
                del v, wc, finite, vals
            got = sums.tolist()
            fp = {"type": "Tensor", "shape": list(x.shape), "dtype": str(x.dtype).removeprefix("torch."),
                  "dot": got[0], "nan": int(got[1]), "posinf": int(got[2]), "neginf": int(got[3])}
            if moments:
                fp.update(w2=got[4], w2abs=got[5], w2sq=got[6])
            prints.append(fp)
        return prints
