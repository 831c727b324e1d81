"""What a problem's own inputs show about themselves, read from the tensors `get_inputs()` returned (never from names).

A kernel may rely on any of these, since every input the problem makes has them: exact zeros (a triangular or
banded matrix; a kernel may skip the zero part), one sign throughout (the domain of a log or sqrt), symmetry,
integral values (masks, counts and labels kept as floats), slices that sum to one or have unit norm (softmax
outputs, normalised vectors). The distributions and the timed calls' fresh draws (inputs.py) keep every one of them.
Standard library and torch only.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

__all__ = ["Structure", "observe", "signs_like", "restore"]

_UNIT_TOL = 1e-3
"""How close to 1 a slice's sum or norm must be, in every slice, for the tensor to count as normalised."""


@dataclass(frozen=True)
class Structure:
    """Facts of one floating-point input, each true of every element or slice of the tensor observed."""

    nonneg: bool = False
    nonpos: bool = False
    symmetric: bool = False
    """Square in its last two dimensions and equal to its transpose there."""
    antisymmetric: bool = False
    integral: bool = False
    """Every value a whole number (0/1 masks, counts, class labels held as floats)."""
    unit_sum: int | None = None
    """A dimension along which every slice sums to 1 (probabilities)."""
    unit_norm: int | None = None
    """A dimension along which every slice has Euclidean norm 1."""
    zeros: torch.Tensor | None = None
    """Where the observed input is exactly zero (None when no element is): the zeros a draw keeps."""

    @property
    def sign_definite(self) -> bool:
        return self.nonneg or self.nonpos

    @property
    def normalised(self) -> bool:
        return self.unit_sum is not None or self.unit_norm is not None

    def describe(self) -> list[str]:
        """The facts by name, for trial records and messages."""
        names = [n for n in ("nonneg", "nonpos", "symmetric", "antisymmetric", "integral") if getattr(self, n)]
        names += [f"unit_sum(dim={self.unit_sum})"] if self.unit_sum is not None else []
        names += [f"unit_norm(dim={self.unit_norm})"] if self.unit_norm is not None else []
        return names + (["zeros"] if self.zeros is not None else [])


def _unit_dim(x: torch.Tensor, norm: bool) -> int | None:
    for d in range(x.dim()):
        if x.shape[d] < 2:
            continue
        s = x.norm(dim=d) if norm else x.sum(dim=d)
        if bool(((s - 1.0).abs() <= _UNIT_TOL).all()):
            return d
    return None


SLICE = 1 << 26
"""Elements per slice of a test or statistic over a whole input (here and in `inputs.py`): every temporary it makes
is of one slice (KernelBench's inputs take up to 16 GiB; a float64 sum of a whole 16 GiB input converts it at once,
32 GiB)."""


def _every(x: torch.Tensor, test) -> bool:
    """Whether `test` (elementwise, to bool) holds for every element of `x`, slice by slice when it is contiguous."""
    if not x.is_contiguous():
        return bool(test(x).all())
    flat = x.reshape(-1)
    return all(bool(test(flat[i:i + SLICE]).all()) for i in range(0, flat.numel(), SLICE))


def observe(t: torch.Tensor, with_zeros: bool = True) -> Structure:
    """The facts of a floating-point tensor as observed (`with_zeros`: keep the zero mask, which costs a bool per
    element where the tensor has any exact zero)."""
    if t.numel() == 0 or not t.is_floating_point():
        return Structure()
    x = t.detach().float()
    square = x.dim() >= 2 and x.shape[-1] == x.shape[-2] and x.shape[-1] > 1
    nonneg, nonpos = _every(x, lambda v: v >= 0), _every(x, lambda v: v <= 0)
    symmetric = square and bool(torch.equal(x, x.mT))
    antisymmetric = square and not symmetric and bool(torch.equal(x, -x.mT))
    integral = _every(x, lambda v: v == v.round())  # a NaN anywhere makes it False
    unit_sum = _unit_dim(x, norm=False) if nonneg and not integral else None
    unit_norm = _unit_dim(x, norm=True) if not integral and unit_sum is None else None
    zero = t == 0
    zeros = zero if with_zeros and bool(zero.any()) else None
    return Structure(nonneg=nonneg, nonpos=nonpos, symmetric=symmetric, antisymmetric=antisymmetric, integral=integral,
                     unit_sum=unit_sum, unit_norm=unit_norm, zeros=zeros)


def signs_like(t: torch.Tensor, s: Structure, gen: torch.Generator) -> torch.Tensor:
    """Random ±1 of `t`'s shape, mirrored across the diagonal of a (anti)symmetric input so the flip keeps it so."""
    coin = torch.rand(t.shape, generator=gen, device=t.device) < 0.5
    signs = coin.to(torch.float32) * 2.0 - 1.0
    if s.symmetric or s.antisymmetric:
        upper = signs.triu()
        signs = upper + upper.triu(1).mT
    return signs


def restore(out: torch.Tensor, s: Structure) -> torch.Tensor:
    """A fresh float32 draw given the structure `s`: mirrored, its zeros put back, normalised (integral values
    are drawn as such by the caller)."""
    if s.symmetric:
        upper = out.triu()
        out = upper + upper.triu(1).mT
    elif s.antisymmetric:
        upper = out.triu(1)
        out = upper - upper.mT
    if s.zeros is not None:
        out = out.masked_fill(s.zeros, 0.0)
    if s.unit_sum is not None:
        out = out.abs()
        out = out / out.sum(dim=s.unit_sum, keepdim=True).clamp_min(1e-12)
    elif s.unit_norm is not None:
        out = out / out.norm(dim=s.unit_norm, keepdim=True).clamp_min(1e-12)
    return out
