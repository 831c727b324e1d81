"""The float64 oracle of a reference forward, and the magnitude of the terms behind each output element.

The trusted parent compares candidates against the oracle with an error budget that grows with the terms that
were combined, not with the result (a sum of large terms that cancel has a small result and a large honest
rounding error). The magnitude of element i's terms is estimated as Σ_j |∂f_i/∂z_j · z_j| over every floating
input and parameter z, with an L1 sketch: for Cauchy-distributed c, the directional derivative J·(z⊙c) is Cauchy
with scale exactly that sum, so the median of its absolute value over a few draws estimates it. Forward-mode AD
gives the derivatives exactly (no finite-difference step); for a sum it is Σ|x_j|, for a matmul Σ_k |a_ik b_kj|.
"""

from __future__ import annotations

import copy

import torch

from .common import package_outputs
from .shared import package_in_place

__all__ = ["Oracle", "TERM_DRAWS", "median_of_9"]

TERM_DRAWS = 9
"""Cauchy draws per estimate: the median of 9 is below a third of the true scale with probability ~2e-3 per
element, and the parent's budget keeps a wide margin above it."""


_MEDIAN_OF_9 = ((1, 2), (4, 5), (7, 8), (0, 1), (3, 4), (6, 7), (1, 2), (4, 5), (7, 8), (0, 3), (5, 8), (4, 7),
                 (3, 6), (1, 4), (2, 5), (4, 7), (4, 2), (6, 4), (4, 2))
"""A 19-step compare-exchange network that leaves the median of nine values in position 4 (min to the first index
of each pair, max to the second)."""


def median_of_9(xs: list[torch.Tensor]) -> torch.Tensor:
    """The elementwise median of nine same-shaped tensors, through the network above with one scratch buffer: no
    stacked copy of all nine and no sort. The tensors' contents are overwritten."""
    if len(xs) != 9:
        raise ValueError(f"median_of_9 takes 9 tensors, got {len(xs)}")
    p = list(xs)
    spare = torch.empty_like(p[0])
    for i, j in _MEDIAN_OF_9:
        torch.minimum(p[i], p[j], out=spare)
        torch.maximum(p[i], p[j], out=p[j])
        p[i], spare = spare, p[i]
    return p[4]


def _is_float(x) -> bool:
    return isinstance(x, torch.Tensor) and x.is_floating_point()


def _widen(x):
    return x.double() if _is_float(x) else x


def _out_of_memory(exc: BaseException) -> bool:
    """A device's out-of-memory error, or the CPU allocator's (a RuntimeError under the worker's memory limit)."""
    return isinstance(exc, torch.OutOfMemoryError) or (isinstance(exc, RuntimeError)
                                                       and "can't allocate memory" in str(exc))


def _free(xs: list) -> None:
    """Give a CUDA device's cached blocks back after the float64 inputs went (their float32 copies stay)."""
    if any(isinstance(x, torch.Tensor) and x.is_cuda for x in xs):
        torch.cuda.empty_cache()


class Oracle:
    """Built once per problem from the reference model; `__call__` gives outputs64 and terms for one input set."""

    def __init__(self, model: torch.nn.Module, seed: int) -> None:
        self.model64 = copy.deepcopy(model).double().eval()
        self.seed = seed

    def __call__(self, inputs: list, in_place: bool = False) -> dict:
        """{"outputs64": packaged, "terms": packaged} or {} when the model cannot run in float64; where the terms
        cannot be estimated (no forward-mode AD for an op, device memory) "terms_missing" says why, and the budget
        falls back to the reference's own error. `in_place` (large-output mode): tensors left on the model's device,
        the terms' nine draws kept in float32 (a scale estimate needs no more; at 1G output elements that is 36 GB of
        device memory fewer; the comparison reads terms as float64 either way), and `inputs` is consumed: its
        tensors are let go once widened, so the task-precision copy and the float64 one are not held together."""
        package = package_in_place if in_place else package_outputs
        xs = [_widen(x) for x in inputs]
        if in_place:
            inputs.clear()
        try:
            with torch.no_grad():
                out = self.model64(*xs)
        except Exception:  # noqa: BLE001 - a model that cannot run in float64 has no oracle
            return {}
        result = {"outputs64": package(out)}
        del out
        try:
            result["terms"] = package(self._terms(xs, compact=in_place))
            return result
        except Exception as exc:  # noqa: BLE001 - no forward AD for some op: the budget falls back to the reference's error
            if not _out_of_memory(exc):
                result["terms_missing"] = f"{type(exc).__name__} estimating them"
                return result
        # (retried here, once the exception, whose frames hold the draws' tensors, is gone)
        # A timed call's check runs while the candidate holds its inputs on the device (2026-12-06, H100: an honest
        # matvec of 1M-term rows was checked with no terms, 4x the reference's error as its budget, and failed on 6
        # of 2048 rows; device memory is the likeliest cause). Once more in float32, the widened inputs let go
        # first: half the memory, and a scale estimate needs no more.
        xs = [x.float() if _is_float(x) else x for x in xs]
        _free(xs)
        try:
            result["terms"] = package(self._terms(xs, compact=True, model=copy.deepcopy(self.model64).float()))
        except Exception as exc:  # noqa: BLE001 - the budget falls back to the reference's error, and says so
            result["terms_missing"] = f"{type(exc).__name__} estimating them (also in float32)"
        return result

    def _terms(self, xs: list, compact: bool = False, model: torch.nn.Module | None = None):
        from torch.func import functional_call, jvp

        model = model if model is not None else self.model64
        named = dict(model.named_parameters())
        named.update(dict(model.named_buffers()))
        params = {k: v.detach() for k, v in named.items() if v.is_floating_point()}
        fixed = {k: v for k, v in named.items() if not v.is_floating_point()}
        slots = [i for i, x in enumerate(xs) if _is_float(x)]

        def f(p: dict, floats: tuple):
            args = list(xs)
            for i, x in zip(slots, floats, strict=True):
                args[i] = x
            return functional_call(model, {**p, **fixed}, tuple(args))

        device = next((t.device for t in [*params.values(), *(xs[i] for i in slots)]), torch.device("cpu"))
        gen = torch.Generator(device=device).manual_seed(self.seed)

        def scaled(t: torch.Tensor) -> torch.Tensor:  # one allocation of t's size, not two
            return torch.empty_like(t).cauchy_(generator=gen).mul_(t)

        primal_x = tuple(xs[i].detach() for i in slots)
        draws, as_tuple = [], False
        with torch.no_grad():
            for _ in range(TERM_DRAWS):
                tangents = ({k: scaled(v) for k, v in params.items()}, tuple(scaled(x) for x in primal_x))
                primal_out, tangent_out = jvp(f, (params, primal_x), tangents)
                del primal_out  # not kept into the next draw
                as_tuple = isinstance(tangent_out, tuple)
                items = tangent_out if as_tuple else (tangent_out,)
                draws.append([(t.abs().float() if compact else t.abs()) if _is_float(t) else None for t in items])
                del tangent_out, items, tangents
        terms = []
        for k in range(len(draws[0])):
            if draws[0][k] is None:
                terms.append(torch.empty(0))
            else:
                terms.append(median_of_9([d[k] for d in draws]))  # TERM_DRAWS == 9
        return tuple(terms) if as_tuple else terms[0]
