"""`verify` and `verify-batch` judge derived sizes by default: a C++ kernel with the problem's size baked in is
rejected under `strict` without any option, an honest one is accepted, and `--no-derive-alt` is the opt-out."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kernelmosaic.cli import app

from . import kit, policy_kit

pytestmark = pytest.mark.slow


@pytest.fixture
def env(build_cache, monkeypatch):
    monkeypatch.setenv("KERNELMOSAIC_CACHE", str(build_cache))


def _verify(*args: str):
    return CliRunner().invoke(app, ["verify", *args, "--device", "cpu", "--trials", "2", "--no-timing"])


def test_verify_rejects_a_baked_in_size_by_default_and_the_opt_out_accepts_it(env, tmp_path):
    problem = kit.write(tmp_path, "problem.py", kit.PROBLEM_ADD_RELU)
    fixed = kit.write(tmp_path, "fixed.py", policy_kit.add_relu_candidate("add_relu_4096"))
    honest = kit.write(tmp_path, "honest.py", policy_kit.add_relu_candidate("add_relu"))
    res = _verify(str(problem), str(fixed))
    assert res.exit_code == 1, res.output
    assert res.stdout.splitlines()[0].startswith("shape_mismatch")  # the summary (notes and progress: stderr)
    assert "alternatives: derived sizes n=256" in res.output and "alternative n=256: shape_mismatch" in res.output
    res = _verify(str(problem), str(honest), "--json")
    assert res.exit_code == 0, res.output
    verdict = json.loads(res.stdout)
    assert [(a["label"], a["passed"]) for a in verdict["robustness"]["alternatives"]] == [("n=256", True)]
    res = _verify(str(problem), str(fixed), "--no-derive-alt", "--json")
    assert res.exit_code == 0, res.output
    verdict = json.loads(res.stdout)
    assert verdict["robustness"]["alternatives"] == [] and "derive_alt is off" in verdict["robustness"]["note"]
    res = _verify(str(problem), str(fixed), "--set", "verify.derive_alt=false")
    assert res.exit_code == 0, res.output


def test_verify_batch_derives_too(env, tmp_path):
    for name, function in (("fixed", "add_relu_4096"), ("honest", "add_relu")):
        d = tmp_path / "pairs" / name
        d.mkdir(parents=True)
        kit.write(d, "problem.py", kit.PROBLEM_ADD_RELU)
        kit.write(d, "candidate.py", policy_kit.add_relu_candidate(function))
    out = tmp_path / "verdicts.jsonl"
    res = CliRunner().invoke(app, ["verify-batch", str(tmp_path / "pairs"), "--out", str(out), "--device", "cpu",
                                   "--trials", "2", "--no-timing"])
    assert res.exit_code == 1, res.output  # the fixed-size candidate is rejected
    rows = {json.loads(line)["id"]: json.loads(line)["verdict"] for line in out.read_text().splitlines()}
    assert rows["fixed/candidate"]["status"] == "shape_mismatch"
    assert rows["honest/candidate"]["status"] == "accepted"


def test_a_size_given_as_a_tuple_is_moved_too(env, tmp_path):
    """KernelBench's losses and scans size their inputs with `input_shape = (N,)`: the size check moves the tuple's
    elements, so the kernel with 4096 baked in is caught there as well (before, no size could be derived)."""
    source = kit.PROBLEM_ADD_RELU.replace("n = 4096", "input_shape = (4096,)").replace(
        "torch.randn(n), torch.randn(n)", "torch.randn(*input_shape), torch.randn(*input_shape)")
    problem = kit.write(tmp_path, "problem.py", source)
    res = _verify(str(problem), kit.write(tmp_path, "fixed.py", policy_kit.add_relu_candidate("add_relu_4096")).as_posix())
    assert res.exit_code == 1, res.output
    assert "alternative input_shape=(256,): shape_mismatch" in res.output
    res = _verify(str(problem), kit.write(tmp_path, "honest.py", policy_kit.add_relu_candidate("add_relu")).as_posix())
    assert res.exit_code == 0, res.output
