"""Policies end to end on the CPU device: partial replacement of a small digit classifier under `strict` and
`kernelbench`, custom kernels whose output is discarded (statically, at run time, a decoy beside a used one),
calls the worker cannot observe, and robustness on alternative shapes (a kernel with its sizes baked in)."""

from __future__ import annotations

import pytest

from kernelmosaic.tasks.shapes import apply_shape_overrides, derive_alternatives
from kernelmosaic.verify import Alternative, Status, Verifier, VerifyConfig

from . import kit, policy_kit

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def verifier(build_cache):
    config = VerifyConfig(device="cpu", trials=2, cache_dir=build_cache, timing=False, run_timeout_s=30)
    with Verifier(config) as v:
        yield v


@pytest.fixture(scope="module")
def digits(tmp_path_factory):
    return kit.write(tmp_path_factory.mktemp("digits"), "problem.py", policy_kit.PROBLEM_DIGITS)


def _alternative(tmp_path, source: str) -> Alternative:
    (overrides,) = derive_alternatives(source)
    path = kit.write(tmp_path, "problem_alt.py", apply_shape_overrides(source, overrides))
    return Alternative(label=", ".join(f"{k}={v}" for k, v in overrides.items()), problem=path)


def _rules(verdict, severity: str) -> set[str]:
    return {f.rule for f in verdict.findings if f.severity == severity}


def test_used_custom_conv_is_accepted_under_kernelbench_with_its_share(verifier, digits, tmp_path):
    v = verifier.verify(digits, kit.write(tmp_path, "used.py", policy_kit.USED), policy="kernelbench")
    assert v.accepted, v.message
    assert v.policy == "kernelbench" and v.to_dict()["policy"] == "kernelbench"
    assert "torch-compute" in _rules(v, "flag")  # PyTorch's share is recorded, not rejected
    assert [(k.name, k.reaches_output) for k in v.custom.kernels] == [("km_digits_ext.conv3x3", True)]
    assert v.custom.share_basis == "host_time" and 0.0 < v.custom.share <= 1.0
    assert "under `kernelbench`" in v.message


def test_the_same_partial_candidate_is_a_static_reject_under_strict(verifier, digits, tmp_path):
    v = verifier.verify(digits, kit.write(tmp_path, "used.py", policy_kit.USED))
    assert v.status == Status.static_reject and v.policy == "strict"
    assert "torch-compute" in _rules(v, "reject")


def test_discarded_kernel_output_is_rejected_statically(verifier, digits, tmp_path):
    v = verifier.verify(digits, kit.write(tmp_path, "discarded.py", policy_kit.DISCARDED), policy="kernelbench")
    assert v.status == Status.static_reject and "kernel-output-unused" in _rules(v, "reject"), v.message


def test_output_multiplied_by_zero_is_rejected_at_run_time(verifier, digits, tmp_path):
    v = verifier.verify(digits, kit.write(tmp_path, "zero.py", policy_kit.TIMES_ZERO), policy="kernelbench")
    assert v.status == Status.output_mismatch, v.message
    assert "kernel-output-unused" in _rules(v, "reject")
    assert v.correctness.passed == v.correctness.trials  # right answers: only the probe tells it apart


def test_a_decoy_beside_a_used_kernel_is_flagged(verifier, digits, tmp_path):
    v = verifier.verify(digits, kit.write(tmp_path, "decoy.py", policy_kit.DECOY), policy="kernelbench")
    assert v.accepted, v.message
    assert "kernel-output-unused" in _rules(v, "flag")
    assert {k.name.rsplit(".", 1)[1]: k.reaches_output for k in v.custom.kernels} == {"conv3x3": True, "scale": False}


def test_calls_the_worker_cannot_observe_fail_kernelbench(build_cache, digits, tmp_path):
    config = VerifyConfig(device="cpu", trials=2, cache_dir=build_cache, timing=False, run_timeout_s=30,
                          static_checks=False)  # the static rules already refuse pybind11 classes
    with Verifier(config) as unguarded:
        cand = kit.write(tmp_path, "unobserved.py", policy_kit.UNOBSERVED)
        v = unguarded.verify(digits, cand, policy="kernelbench")
        assert v.status == Status.no_custom_kernel and "kernel-output-unverified" in _rules(v, "reject"), v.message
        strict = unguarded.verify(digits, cand)
    assert strict.accepted and "kernel-output-unverified" in _rules(strict, "flag"), strict.message


def test_generic_kernel_passes_its_alternative_shapes_under_strict(verifier, tmp_path):
    problem = kit.write(tmp_path, "problem.py", kit.PROBLEM_ADD_RELU)
    alt = _alternative(tmp_path, kit.PROBLEM_ADD_RELU)
    v = verifier.verify(problem, kit.write(tmp_path, "generic.py", policy_kit.add_relu_candidate("add_relu")),
                        alternatives=[alt])
    assert v.accepted, v.message
    assert alt.label == "n=3583" and v.robustness.passed
    assert [(a.label, a.passed, a.trials) for a in v.robustness.alternatives] == [("n=3583", True, 2)]


def test_shape_specialised_kernel_is_rejected_under_strict_and_flagged_under_kernelbench(verifier, tmp_path):
    problem = kit.write(tmp_path, "problem.py", kit.PROBLEM_ADD_RELU)
    alt = _alternative(tmp_path, kit.PROBLEM_ADD_RELU)
    cand = kit.write(tmp_path, "fixed.py", policy_kit.add_relu_candidate("add_relu_4096"))
    strict = verifier.verify(problem, cand, alternatives=[alt])
    assert strict.status == Status.shape_mismatch and "shape-specialised" in _rules(strict, "reject"), strict.message
    assert strict.robustness.alternatives[0].status == Status.shape_mismatch and not strict.robustness.passed
    lenient = verifier.verify(problem, cand, alternatives=[alt], policy="kernelbench")
    assert lenient.accepted and "shape-specialised" in _rules(lenient, "flag"), lenient.message



def test_baked_in_size_is_rejected_by_default_and_accepted_with_the_opt_out(verifier, tmp_path):
    """No alternative given: the verifier derives one from the problem's input-size constant (n=4096 -> 256 on the
    CPU), so the size baked into the kernel shows; `derive_alt=False` is the opt-out."""
    problem = kit.write(tmp_path, "problem.py", kit.PROBLEM_ADD_RELU)
    cand = kit.write(tmp_path, "fixed.py", policy_kit.add_relu_candidate("add_relu_4096"))
    strict = verifier.verify(problem, cand)
    assert strict.status == Status.shape_mismatch and "shape-specialised" in _rules(strict, "reject"), strict.message
    assert [(a.label, a.passed) for a in strict.robustness.alternatives] == [("n=256", False)]
    assert strict.robustness.note.startswith("derived sizes n=256")
    lenient = verifier.verify(problem, cand, policy="kernelbench")
    assert lenient.accepted and "shape-specialised" in _rules(lenient, "flag"), lenient.message
    honest = verifier.verify(problem, kit.write(tmp_path, "generic.py", policy_kit.add_relu_candidate("add_relu")))
    assert honest.accepted and honest.robustness.passed, honest.message
    assert [(a.label, a.passed, a.trials) for a in honest.robustness.alternatives] == [("n=256", True, 2)]
    with Verifier(verifier.config.model_copy(update={"derive_alt": False})) as off:
        plain = off.verify(problem, cand)
    assert plain.accepted and plain.robustness.alternatives == [], plain.message
    assert "derive_alt is off" in plain.robustness.note


def test_no_derivable_size_is_said_in_the_verdict(verifier, tmp_path):
    """A problem whose only size also reaches the model's init arguments keeps its sizes; the verdict says why."""
    tied = kit.PROBLEM_ADD_RELU.replace("def get_init_inputs():\n    return []", "def get_init_inputs():\n    return [n]")
    tied = tied.replace("class Model(nn.Module):\n", "class Model(nn.Module):\n    def __init__(self, size):\n"
                                                     "        super().__init__()\n\n")
    problem = kit.write(tmp_path, "problem.py", tied)
    v = verifier.verify(problem, kit.write(tmp_path, "generic.py", policy_kit.add_relu_candidate("add_relu")))
    assert v.accepted and v.robustness.alternatives == [], v.message
    assert v.robustness.note.startswith("no alternative sizes could be derived: no module-level integer constant")


def test_an_alternative_the_reference_cannot_run_is_not_held_against_the_candidate(verifier, tmp_path):
    problem = kit.write(tmp_path, "problem.py", kit.PROBLEM_ADD_RELU)
    broken = kit.write(tmp_path, "broken.py", kit.PROBLEM_ADD_RELU.replace("torch.randn(n), torch.randn(n)",
                                                                           "torch.randn(n), torch.randn(n + 1)"))
    v = verifier.verify(problem, kit.write(tmp_path, "generic.py", policy_kit.add_relu_candidate("add_relu")),
                        alternatives=[Alternative(label="mismatched inputs", problem=broken)])
    assert v.accepted and v.robustness.passed, v.message
    assert v.robustness.alternatives[0].status == Status.bad_problem
