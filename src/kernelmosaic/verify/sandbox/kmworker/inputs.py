"""Input sets for trials and timed calls.

Trials use the problem's own `get_inputs()` under a fresh seed ("given"), and, where the reference stays finite on
them, two transforms of those same inputs that keep every structure they show (structure.py): "signed" flips the
signs of elements at random, "scaled" multiplies by a positive factor between 2 and 8. Both keep zeros zero (a
triangular input stays triangular) and leave integer, bool and index inputs alone; an input of one sign keeps it
(a flip would leave the domain of a log or sqrt), a symmetric one is flipped symmetrically, an integral-valued or
normalised one is not scaled. Timed calls get fresh values at fresh addresses every call ("redraw"), drawn to match
each input's observed range and structure, so no output can be cached across calls.
"""

from __future__ import annotations

import torch

from . import structure
from .structure import observe, restore, signs_like

__all__ = ["DISTRIBUTIONS", "apply_distribution", "cast_precision", "cast_model", "InputTemplate", "to_device"]

DISTRIBUTIONS = ("given", "signed", "scaled")
_DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


def _map(obj, fn):
    if isinstance(obj, torch.Tensor):
        return fn(obj)
    if isinstance(obj, (list, tuple)):
        return type(obj)(_map(x, fn) for x in obj)
    return obj


def to_device(inputs: list, device: str) -> list:
    return _map(inputs, lambda t: t.to(device))


def cast_precision(inputs: list, precision: str) -> list:
    """fp16/bf16 tasks: float32 inputs become the task's dtype; other dtypes are left alone."""
    if precision == "fp32":
        return inputs
    dtype = _DTYPES[precision]
    return _map(inputs, lambda t: t.to(dtype) if t.dtype == torch.float32 else t)


def cast_model(model: torch.nn.Module, precision: str) -> torch.nn.Module:
    """fp16/bf16 tasks run their models in that dtype; fp32 models are left as constructed."""
    return model if precision == "fp32" else model.to(_DTYPES[precision])


def apply_distribution(inputs: list, name: str, gen: torch.Generator) -> list:
    """`inputs` (the problem's own, from one seed) under the named distribution; see the module's docstring."""
    if name == "given":
        return inputs

    def transform(t: torch.Tensor) -> torch.Tensor:
        if not t.is_floating_point() or t.numel() == 0:
            return t
        s = observe(t, with_zeros=False)
        if name == "signed":
            if s.sign_definite:
                return t
            return (t.float() * signs_like(t, s, gen)).to(t.dtype)
        if s.integral or s.normalised:
            return t
        factor = 2.0 ** (1.0 + 2.0 * float(torch.rand((), generator=gen, device=gen.device)))
        return (t.float() * factor).to(t.dtype)

    return _map(inputs, transform)




def _nonzero_stats(x: torch.Tensor, zeros: torch.Tensor | None) -> tuple[float, float, float, float]:
    """The range, mean and (unbiased) standard deviation of the elements of `x` that are not exact zeros (`zeros`:
    their mask, or None for none), slice by slice: masked reductions (boolean indexing builds an int64 index of
    numel x ndim elements, 32 GiB for an 8 GiB 2-D input), float64 sums, no temporary larger than a slice."""
    flat = x.reshape(-1)
    mask = zeros.reshape(-1) if zeros is not None else None
    n = flat.numel() - (int(mask.sum()) if mask is not None else 0)
    if n == 0:
        return 0.0, 1.0, 0.0, 1.0
    step = structure.SLICE
    spans = [(i, min(i + step, flat.numel())) for i in range(0, flat.numel(), step)]

    def part(i: int, j: int, fill: float | None = None) -> torch.Tensor:
        piece = flat[i:j]
        return piece if mask is None or fill is None else piece.masked_fill(mask[i:j], fill)

    lo = min(float(part(i, j, float("inf")).min()) for i, j in spans)
    hi = max(float(part(i, j, float("-inf")).max()) for i, j in spans)
    if n == 1:
        return lo, hi, lo, 1.0
    mean = sum(float(part(i, j).sum(dtype=torch.float64)) for i, j in spans) / n  # the zeros add nothing
    square = 0.0
    for i, j in spans:
        centred = part(i, j).double() - mean
        if mask is not None:
            centred.masked_fill_(mask[i:j], 0.0)
        square += float(centred.square_().sum())
    return lo, hi, mean, (square / (n - 1)) ** 0.5


class InputTemplate:
    """What each argument looks like, learnt from `get_inputs()`, to draw fresh look-alike values on the device."""

    def __init__(self, inputs: list) -> None:
        self.specs = [self._describe(x) for x in inputs]

    @staticmethod
    def _describe(x):
        if not isinstance(x, torch.Tensor):
            return ("const", x)
        if x.dtype == torch.bool:
            return ("bool", tuple(x.shape), x.device, float(x.float().mean()) if x.numel() else 0.5)
        if not x.is_floating_point():
            lo, hi = (int(x.min()), int(x.max())) if x.numel() else (0, 0)
            return ("int", tuple(x.shape), x.dtype, x.device, lo, hi)
        s = observe(x)
        lo, hi, mean, std = _nonzero_stats(x.float(), s.zeros)
        return ("float", tuple(x.shape), x.dtype, x.device, lo, hi, mean, std, s)

    def draw(self, gen: torch.Generator, skip=()) -> list:
        """A fresh input set from `gen`; arguments whose index is in `skip` are None (drawn elsewhere)."""
        return [None if i in skip else self._draw(spec, gen) for i, spec in enumerate(self.specs)]

    @classmethod
    def draw_one(cls, spec: tuple, gen: torch.Generator):
        """One argument drawn from a spec of `specs`' form (another shape, e.g. a flat buffer of windows)."""
        return cls._draw(spec, gen)

    def drawer(self, device: str):
        """`draw(seed)`: a fresh input set from that seed alone, the same in every process on this device (the
        reference worker redraws a timed call's inputs from its seed)."""
        gen = torch.Generator(device=device)
        return lambda seed: self.draw(gen.manual_seed(seed))

    @staticmethod
    def _draw(spec, gen):
        kind = spec[0]
        if kind == "const":
            return spec[1]
        if kind == "bool":
            _, shape, device, p = spec
            return torch.rand(shape, generator=gen, device=device) < p
        if kind == "int":
            _, shape, dtype, device, lo, hi = spec
            return torch.randint(lo, hi + 1, shape, generator=gen, device=device, dtype=dtype)
        _, shape, dtype, device, lo, hi, mean, std, s = spec
        if s.integral:
            out = torch.randint(int(lo), int(hi) + 1, shape, generator=gen, device=device).float()
        elif lo >= 0.0 and hi <= 1.0:
            out = torch.rand(shape, generator=gen, device=device) * (hi - lo) + lo
        elif lo >= 0.0:
            out = (torch.randn(shape, generator=gen, device=device) * std + mean).abs()
        elif hi <= 0.0:
            out = -(torch.randn(shape, generator=gen, device=device) * std + mean).abs()
        else:
            out = torch.randn(shape, generator=gen, device=device) * std + mean
        return restore(out, s).to(dtype)
