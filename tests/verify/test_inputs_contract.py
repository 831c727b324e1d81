"""Input distributions that respect the problem: the trials' transforms and the timed calls' draws keep every
structure the problem's own inputs show (zeros, one sign, symmetry, integral values, normalised slices), decided from
the tensors themselves; and, end to end on the CPU, KernelBench's triangular matmuls accept a kernel that skips the
zero halves while wrong kernels are still rejected."""

from __future__ import annotations

import pytest
import torch

from kernelmosaic.tasks.shapes import apply_shape_overrides
from kernelmosaic.verify import Status, Verifier, VerifyConfig
from kernelmosaic.verify.sandbox.kmworker.inputs import InputTemplate, apply_distribution
from kernelmosaic.verify.sandbox.kmworker.structure import observe

from . import kit
from . import triangular_kit as tk


def _gen(seed: int = 11) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _inputs() -> dict[str, torch.Tensor]:
    torch.manual_seed(0)
    sym = torch.randn(16, 16)
    return {
        "triu": torch.triu(torch.randn(16, 16)),
        "tril": torch.tril(torch.randn(3, 16, 16)),
        "symmetric": (sym + sym.T) / 2,
        "antisymmetric": sym - sym.T,
        "positive": torch.rand(32, 8),
        "negative": -torch.rand(32),
        "probs": torch.randn(4, 10).softmax(dim=-1),
        "unit_rows": torch.nn.functional.normalize(torch.randn(5, 7), dim=1),
        "mask01": (torch.rand(8, 8) < 0.3).float(),
        "dense": torch.randn(64, 32),
        "banded": torch.randn(12, 12) * (torch.arange(12)[:, None] - torch.arange(12)[None, :]).abs().le(1),
    }


def test_the_facts_come_from_the_values_not_the_names():
    x = _inputs()
    assert observe(x["symmetric"]).symmetric and not observe(x["dense"]).symmetric
    assert observe(x["antisymmetric"]).antisymmetric
    assert observe(x["positive"]).nonneg and observe(x["negative"]).nonpos and not observe(x["dense"]).sign_definite
    assert observe(x["probs"]).unit_sum == 1 and observe(x["unit_rows"]).unit_norm == 1
    assert observe(x["mask01"]).integral and not observe(x["dense"]).integral
    assert torch.equal(observe(x["triu"]).zeros, x["triu"] == 0)
    assert observe(x["dense"]).zeros is None and observe(x["dense"]).describe() == []


@pytest.mark.parametrize("dist", ["signed", "scaled"])
def test_transforms_keep_every_structure_the_inputs_show(dist):
    given = _inputs()
    out = dict(zip(given, apply_distribution(list(given.values()), dist, _gen()), strict=True))
    for name, t in given.items():
        assert out[name].shape == t.shape and out[name].dtype == t.dtype, name
        assert torch.equal(out[name] == 0, t == 0), f"{name}: zeros must stay zeros and nothing else become zero"
    assert torch.equal(out["triu"], out["triu"].triu()) and torch.equal(out["tril"], out["tril"].tril())
    assert torch.equal(out["symmetric"], out["symmetric"].T)
    assert torch.equal(out["antisymmetric"], -out["antisymmetric"].T)
    assert (out["positive"] >= 0).all() and (out["negative"] <= 0).all()
    assert torch.equal(out["probs"], given["probs"])  # one sign, and normalised: neither transform applies
    assert torch.allclose(out["unit_rows"].norm(dim=1), torch.ones(5))
    assert torch.equal(out["mask01"], given["mask01"])


def test_signed_flips_signs_where_the_inputs_take_both():
    given = _inputs()
    out = dict(zip(given, apply_distribution(list(given.values()), "signed", _gen()), strict=True))
    for name in ("triu", "tril", "symmetric", "antisymmetric", "dense", "banded", "unit_rows"):
        flipped = (out[name] != given[name]) & (given[name] != 0)
        assert torch.equal(out[name].abs(), given[name].abs()), name  # only signs change
        assert 0.2 < flipped.float().sum() / (given[name] != 0).sum() < 0.8, name
    assert torch.equal(out["positive"], given["positive"]) and torch.equal(out["negative"], given["negative"])


def test_scaled_multiplies_by_one_positive_factor():
    given = _inputs()
    out = dict(zip(given, apply_distribution(list(given.values()), "scaled", _gen()), strict=True))
    for name in ("triu", "symmetric", "dense", "positive", "negative", "banded"):
        nz = given[name] != 0
        ratio = out[name][nz] / given[name][nz]
        assert torch.allclose(ratio, ratio[0].expand_as(ratio)) and 2.0 <= float(ratio[0]) <= 8.0, name


def test_integer_bool_and_index_inputs_are_never_touched():
    idx, flags, labels = torch.randint(0, 10, (32,)), torch.rand(8) < 0.5, torch.arange(6)
    for dist in ("signed", "scaled"):
        out = apply_distribution([idx, flags, labels, 3, 0.5], dist, _gen())
        assert out[0] is idx and out[1] is flags and out[2] is labels and out[3:] == [3, 0.5]


def test_timed_draws_keep_the_structure_and_agree_across_processes():
    given = _inputs()
    a = InputTemplate(list(given.values())).draw(_gen(5))
    b = InputTemplate(list(given.values())).draw(_gen(5))  # what the other worker draws from the same seed
    assert all(torch.equal(x, y) for x, y in zip(a, b, strict=True))
    drawn = dict(zip(given, a, strict=True))
    assert not torch.equal(drawn["dense"], given["dense"])  # fresh values
    assert torch.equal(drawn["triu"], drawn["triu"].triu()) and torch.equal(drawn["tril"], drawn["tril"].tril())
    assert (drawn["triu"].triu() != 0).sum() == (given["triu"] != 0).sum()
    assert torch.equal(drawn["banded"] == 0, given["banded"] == 0)
    assert torch.equal(drawn["symmetric"], drawn["symmetric"].T)
    assert torch.equal(drawn["antisymmetric"], -drawn["antisymmetric"].T)
    assert torch.allclose(drawn["probs"].sum(dim=1), torch.ones(4)) and (drawn["probs"] >= 0).all()
    assert torch.allclose(drawn["unit_rows"].norm(dim=1), torch.ones(5))
    assert set(drawn["mask01"].unique().tolist()) <= {0.0, 1.0}
    assert (drawn["positive"] >= 0).all() and (drawn["negative"] <= 0).all()


# ---- end to end: KernelBench's triangular matmuls (L1 14 and 15), shrunk for the CPU ----------------------------

N_CPU = 96


@pytest.fixture(scope="module")
def timed_verifier(build_cache):
    config = VerifyConfig(device="cpu", trials=3, cache_dir=build_cache, timing_budget_ms=20, timing_rounds=1,
                          compile_baseline=False, run_timeout_s=30)
    with Verifier(config) as verifier:
        yield verifier


@pytest.fixture(scope="module")
def problems(tmp_path_factory):
    d = tmp_path_factory.mktemp("triangular")
    return {part: kit.write(d, f"{part}.py", apply_shape_overrides(tk.problem(part), {"N": N_CPU}))
            for part in ("triu", "tril")}


@pytest.mark.slow
@pytest.mark.parametrize("part", ["triu", "tril"])
def test_a_kernel_that_skips_the_zero_halves_is_accepted(timed_verifier, problems, tmp_path, part):
    v = timed_verifier.verify(problems[part], kit.write(tmp_path, f"{part}.py", tk.CPU_CANDIDATES[part]))
    assert v.accepted, f"{v.status}: {v.message} {v.findings}"
    assert set(v.correctness.distributions) == {"given", "signed", "scaled"}  # the transforms ran, none skipped
    assert v.correctness.passed == v.correctness.trials == 3
    assert v.timing is not None  # the timed calls' fresh draws were checked too, and kept the triangles


@pytest.mark.slow
@pytest.mark.parametrize("name", ["triu_skips_diagonal", "triu_reads_wrong_half"])
def test_a_wrong_triangular_kernel_is_still_rejected(timed_verifier, problems, tmp_path, name):
    v = timed_verifier.verify(problems["triu"], kit.write(tmp_path, f"{name}.py", tk.CPU_CANDIDATES[name]))
    assert v.status == Status.output_mismatch, f"{v.status}: {v.message}"
    assert "trial 0 (given inputs)" in v.correctness.detail  # wrong on the problem's own inputs


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_kernelbench_size_triangular_matmul_on_cuda(build_cache, tmp_path):
    problem = kit.write(tmp_path, "triu.py", tk.problem("triu"))  # N = 4096, as KernelBench states it
    config = VerifyConfig(device="cuda", trials=3, cache_dir=build_cache, timing_budget_ms=200)
    with Verifier(config) as verifier:
        v = verifier.verify(problem, kit.write(tmp_path, "triu_cuda.py", tk.cuda_candidate()))
    assert v.accepted, f"{v.status}: {v.message} {v.findings}"
    assert set(v.correctness.distributions) == {"given", "signed", "scaled"}


@pytest.mark.parametrize("name", ["triu", "tril", "banded", "dense", "mask01", "positive"])
def test_a_draw_learns_the_nonzero_values_range_mean_and_spread(name):
    """What a fresh draw imitates is the statistics of the input's non-zero elements, taken without indexing by the
    zero mask (that index is numel x ndim int64s: 32 GiB for KernelBench's 8 GiB L1-norm input)."""
    x = _inputs()[name]
    nonzero = x[x != 0]
    [spec] = InputTemplate([x]).specs
    _, shape, dtype, _, lo, hi, mean, std, _ = spec
    assert (shape, dtype) == (tuple(x.shape), x.dtype)
    assert (lo, hi) == (float(nonzero.min()), float(nonzero.max()))
    assert mean == pytest.approx(float(nonzero.double().mean()), rel=1e-6, abs=1e-9)
    assert std == pytest.approx(float(nonzero.double().std()), rel=1e-5)


def test_an_all_zero_input_is_described_without_failing():
    [spec] = InputTemplate([torch.zeros(4, 4)]).specs
    assert spec[4:8] == (0.0, 1.0, 0.0, 1.0)
    assert torch.equal(InputTemplate([torch.zeros(4, 4)]).draw(_gen())[0], torch.zeros(4, 4))
