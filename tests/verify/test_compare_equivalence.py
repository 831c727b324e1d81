"""The chunked `compare_outputs` returns exactly what the whole-tensor formula it replaced returns
(compare_reference.py): status, detail (first bad element included), every maximum bit for bit, over random
outputs with NaN, ±inf, zeros, integers, cancellation, overflow, mismatched packages, with and without an oracle,
and across chunk boundaries (a tiny chunk size for the random cases, the real one for the boundary cases)."""

from __future__ import annotations

import random

import pytest
import torch

from kernelmosaic.contracts.verdict import Status
from kernelmosaic.verify import compare
from kernelmosaic.verify.compare import Comparison, compare_outputs
from kernelmosaic.verify.sandbox.kmworker.common import package_outputs

from .compare_reference import reference_compare_outputs

FLOATS = (torch.float32, torch.float64, torch.float16, torch.bfloat16)
INTS = (torch.int32, torch.int64, torch.bool)
SPECIALS = (float("nan"), float("inf"), float("-inf"), 0.0, -0.0, 1e308, -1e308, 1e-310)
TOLERANCES = ((1e-4, 1e-4), (1e-2, 1e-2), (0.0, 0.0), (0.0, 1e-5), (1e-5, 0.0), (-1e-6, 1e-3))  # < 0: masks matter


def _key(c: Comparison) -> tuple:
    """Every field, floats by their bits (0.0 and -0.0 differ here)."""
    return (c.status, c.detail, *(float(x).hex() for x in (c.max_abs, c.max_rel, c.budget_used,
                                                           c.reference_budget_used, *c.extra)), len(c.extra))


def _same(ref: dict, got: dict, atol: float, rtol: float, oracle: dict | None) -> Comparison:
    new = compare_outputs(ref, got, atol, rtol, oracle)
    assert _key(new) == _key(reference_compare_outputs(ref, got, atol, rtol, oracle))
    return new


def _sprinkle(t: torch.Tensor, rng: random.Random, rate: float) -> torch.Tensor:
    """A copy of float64 `t` with special values (NaN, ±inf, zeros, near-overflow, subnormal) at random places."""
    t = t.clone()
    flat = t.view(-1)
    for k in range(flat.numel()):
        if rng.random() < rate:
            flat[k] = rng.choice(SPECIALS)
    return t


def _values(shape: list[int], rng: random.Random, gen: torch.Generator) -> torch.Tensor:
    """float64 truth of one kind: ordinary, integer-valued, zeros, cancellation-heavy, or wide-ranging."""
    kind = rng.choice(["normal", "integers", "zeros", "cancel", "wide", "huge"])
    x = torch.randn(shape, generator=gen, dtype=torch.float64)
    if kind == "integers":
        return torch.randint(-5, 6, shape, generator=gen).double()
    if kind == "zeros":
        return torch.zeros(shape, dtype=torch.float64)
    if kind == "cancel":  # a big sum minus almost itself: tiny results, large terms
        return (x * 1e6 + 1e-3 * x) - x * 1e6
    if kind == "huge":  # float64 differences overflow to inf; lower precisions round these to ±inf
        return x.sign() * (0.6 + 0.5 * x.abs().clamp(max=2)) * 1e308
    if kind == "wide":
        return x * torch.pow(10.0, torch.randint(-30, 30, shape, generator=gen).double())
    return x * rng.choice([1e-6, 1.0, 3.0, 1e4])


def _output(rng: random.Random, gen: torch.Generator, dtype: torch.dtype, shape: list[int]) -> tuple:
    """(reference tensor, candidate tensor, oracle float64, oracle terms) for one output."""
    x64 = _values(shape, rng, gen)
    if not dtype.is_floating_point:
        r = x64.clamp(-100, 100).to(dtype)
        g = r.clone()
        if g.numel() and rng.random() < 0.5:
            g.view(-1)[rng.randrange(g.numel())] = not bool(g.view(-1)[0]) if dtype == torch.bool else 7
        return r, g, x64, x64.abs()
    rate = rng.choice([0.0, 0.0, 0.02, 0.2])
    r64 = _sprinkle(x64, rng, rate)
    noise = rng.choice([0.0, 1e-9, 1e-7, 1e-5, 1e-3, 1e-1])
    g64 = r64 * (1 + noise * torch.randn(shape, generator=gen, dtype=torch.float64))
    if rng.random() < 0.4:  # specials of its own: NaN or inf where the reference has none, or none where it has
        g64 = _sprinkle(g64, rng, max(rate, 0.01))
    elif rng.random() < 0.5:  # NaN kept where the reference has it, as an honest kernel would
        g64 = torch.where(torch.isnan(r64), r64, g64)
    if rng.random() < 0.2:  # signs flipped here and there: with huge values, differences overflow
        g64 = torch.where(torch.rand(shape, generator=gen) < 0.2, -g64, g64)
    if rng.random() < 0.2 and g64.numel():  # one far-off element
        g64.view(-1)[rng.randrange(g64.numel())] += rng.choice([1.0, -1e3, 1e-2])
    o64 = _sprinkle(x64, rng, rate / 4) if rng.random() < 0.5 else x64
    if rng.random() < 0.1:  # an oracle far from the reference: r − o overflows where both are huge
        o64 = torch.where(torch.rand(shape, generator=gen) < 0.3, -o64, o64)
    terms = x64.abs() * rng.choice([1.0, 64.0, 4096.0, 1e9])
    if rng.random() < 0.2:
        terms = _sprinkle(terms, rng, 0.05)
    return r64.to(dtype), g64.to(dtype), o64, terms


def _shape(rng: random.Random) -> list[int]:
    return rng.choice([[], [0], [1], [rng.randint(1, 40)], [rng.randint(1, 6), rng.randint(1, 9)],
                       [2, 0, 3], [rng.randint(1, 4), rng.randint(1, 4), rng.randint(1, 5)]])


def _spoil(ref: dict, got: dict, rng: random.Random) -> dict:
    """Sometimes a candidate package that differs in structure: count, tuple-ness, type, shape, dtype, device."""
    got = {"tuple": got["tuple"], "meta": [dict(m) for m in got["meta"]], "tensors": list(got["tensors"])}
    how = rng.choice(["none"] * 18 + ["tuple", "count", "type", "shape", "dtype", "device"])
    i = rng.randrange(len(got["meta"]))
    if how == "tuple":
        got["tuple"] = not got["tuple"]
    elif how == "count":
        got["meta"].append(got["meta"][0])
        got["tensors"].append(got["tensors"][0])
    elif how == "type":
        got["meta"][i] = {"type": "list"}
    elif how == "shape":
        got["meta"][i]["shape"] = [*got["meta"][i].get("shape", []), 1]
    elif how == "dtype":
        got["meta"][i]["dtype"] = "float16" if got["meta"][i].get("dtype") != "float16" else "float32"
    elif how == "device":
        got["meta"][i]["device"] = "cuda"
    return got


def _case(seed: int) -> tuple:
    rng, gen = random.Random(seed), torch.Generator().manual_seed(seed)
    outs = [_output(rng, gen, rng.choice(FLOATS * 3 + INTS), _shape(rng)) for _ in range(rng.randint(1, 3))]
    as_tuple = len(outs) > 1 or rng.random() < 0.3
    pack = (lambda ts: package_outputs(tuple(ts))) if as_tuple else (lambda ts: package_outputs(ts[0]))
    ref, got = pack([o[0] for o in outs]), pack([o[1] for o in outs])
    kind = rng.choice([None, "full", "full", "no terms", "short", "wrong shape"])
    oracle = None
    if kind is not None:
        o64, terms = [o[2] for o in outs], [o[3] for o in outs]
        if kind == "short":
            o64, terms = o64[:1], terms[:1]
        if kind == "wrong shape":
            o64[0] = o64[0].reshape(-1, 1)
        oracle = {"outputs64": {"tuple": as_tuple, "meta": [], "tensors": o64}}  # only "tensors" is read
        if kind != "no terms":
            oracle["terms"] = {"tuple": as_tuple, "meta": [], "tensors": terms}
    return ref, _spoil(ref, got, rng), *rng.choice(TOLERANCES), oracle


def test_random_cases_match_the_whole_tensor_formula(monkeypatch):
    monkeypatch.setattr(compare, "CHUNK", 7)  # many chunks, and boundaries everywhere
    statuses: dict[Status, int] = {}
    phrases = dict.fromkeys(["NaN in one output", "outside the error budget", "elements differ", "float64 oracle"], 0)
    for seed in range(1500):
        cmp = _same(*_case(seed))
        statuses[cmp.status] = statuses.get(cmp.status, 0) + 1
        for phrase in phrases:
            phrases[phrase] += phrase in cmp.detail
    # the generator reaches every outcome, not only the easy ones
    assert {Status.accepted, Status.output_mismatch, Status.shape_mismatch, Status.dtype_mismatch} <= set(statuses)
    assert statuses[Status.accepted] > 100 and min(phrases.values()) > 20, (statuses, phrases)


@pytest.mark.parametrize("chunk", [1, 2, 3, 16, 1 << 14])
def test_any_chunk_size_gives_the_same_answer(monkeypatch, chunk):
    monkeypatch.setattr(compare, "CHUNK", chunk)
    for seed in range(200):
        _same(*_case(seed))


def _boundary_case(n: int, bad_at: list[int], kind: str, oracle: bool) -> tuple:
    gen = torch.Generator().manual_seed(n)
    x64 = torch.randn(n, generator=gen, dtype=torch.float64)
    ref = x64.float()
    got = (x64 * (1 + 1e-7 * torch.randn(n, generator=gen, dtype=torch.float64))).float()
    for k in bad_at:
        if kind == "off":
            got[k] += 1.0
        elif kind == "nan":
            got[k] = float("nan")
        elif kind == "inf":
            ref[k], got[k] = float("inf"), float("-inf")
    truth = {"outputs64": package_outputs(x64), "terms": package_outputs(x64.abs() * 8)} if oracle else None
    return package_outputs(ref), package_outputs(got), 1e-4, 1e-4, truth


C = 1 << 14


@pytest.mark.parametrize("n", [C - 1, C, C + 1, 3 * C + 5])
@pytest.mark.parametrize("kind", ["off", "nan", "inf"])
@pytest.mark.parametrize("oracle", [True, False])
def test_chunk_boundaries_at_the_real_chunk_size(n, kind, oracle):
    assert compare.CHUNK == C
    assert _same(*_boundary_case(n, [], kind, oracle)).ok
    later = [k for k in (C - 1, C, C + 1, 2 * C, n - 1) if k < n]
    cmp = _same(*_boundary_case(n, later[::-1], kind, oracle))  # first bad element in a later chunk
    assert not cmp.ok and (kind == "nan" or f"first at [{later[0]}]" in cmp.detail)


def test_float64_outputs_are_left_untouched():
    """A float64 output is compared through views of the packaged tensors: nothing may write to them."""
    x = torch.randn(3 * C + 1, dtype=torch.float64)
    x[::97] = float("nan")
    ref, got = package_outputs(x), package_outputs(x * (1 + 1e-9))
    truth = {"outputs64": package_outputs(x + 1e-12), "terms": package_outputs(x.abs())}
    before = [t.clone() for t in (*ref["tensors"], *got["tensors"], *truth["outputs64"]["tensors"],
                                  *truth["terms"]["tensors"])]
    _same(ref, got, 1e-4, 1e-4, truth)
    after = (*ref["tensors"], *got["tensors"], *truth["outputs64"]["tensors"], *truth["terms"]["tensors"])
    assert all(torch.equal(a.nan_to_num(7.0), b.nan_to_num(7.0)) for a, b in zip(before, after, strict=True))


def test_a_candidate_tensor_that_contradicts_its_description_is_a_shape_mismatch():
    ref = package_outputs(torch.ones(4))
    got = package_outputs(torch.ones(4))
    got["tensors"] = [torch.ones(1)]  # described as [4]; broadcasting it would compare one value four times
    cmp = compare_outputs(ref, got, 1e-4, 1e-4)
    assert cmp.status == Status.shape_mismatch and "holds shape [1]" in cmp.detail


def _f64(*values: float) -> dict:
    return package_outputs(torch.tensor(values, dtype=torch.float64))


@pytest.mark.parametrize("ref, got, oracle", [
    # inf in the candidate only, where the oracle disagrees with the reference: left out of reference_budget_used
    (_f64(1.0, 1.0), _f64(1.0, float("inf")), _f64(1.0, 1.5)),
    # reference − oracle overflows: it adds nothing to the budget (a candidate near the oracle must still fit)
    (_f64(1.5e308, 1.0), _f64(-1.4e308, 1.0), _f64(-1.5e308, 1.0)),
    (_f64(1.5e308, 1.0), _f64(-1.5e308, 1.0), _f64(-1.5e308, 1.0)),
    # candidate − oracle overflows: diff is inf, so the element is neither counted nor bad
    (_f64(1.5e308, 2.0), _f64(-1.5e308, 1.0), _f64(1.5e308, 1.0)),
    (_f64(float("nan"), float("inf"), float("-inf")), _f64(float("nan"), float("inf"), float("inf")), None),
])
@pytest.mark.parametrize("atol", [1e-4, 0.0, -1e-6])
def test_hand_picked_overflow_and_inf_cases(ref, got, oracle, atol):
    truth = {"outputs64": oracle, "terms": oracle} if oracle else None
    _same(ref, got, atol, 1e-3, truth)
