"""The reference worker's set-up and trials replies are parsed before any judgement reads them
(verify/reference_data.py). The honest replies are made by the worker's own code (`ReferenceRole`, in this process,
on a problem written as KernelBench problems are); one that is not what the worker sends is `bad_problem` naming the
field, never a KeyError inside a judgement."""

from __future__ import annotations

import textwrap

import pytest
import torch

from kernelmosaic.contracts.verdict import Status
from kernelmosaic.verify.judgement import Stop
from kernelmosaic.verify.reference_data import RefTrial, SkippedTrial, reference_setup, reference_trials

PROBLEM = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def __init__(self, features):
            super().__init__()
            self.norm = nn.LayerNorm(features)

        def forward(self, x):
            return torch.log(self.norm(x).exp().sum(dim=-1))

    def get_inputs():
        return [torch.randn(4, 16)]

    def get_init_inputs():
        return [16]
""")


@pytest.fixture(scope="module")
def role(tmp_path_factory):
    from kernelmosaic.verify.sandbox.kmworker.reference import ReferenceRole

    path = tmp_path_factory.mktemp("ref") / "problem.py"
    path.write_text(PROBLEM)
    r = ReferenceRole("cpu")
    setup = r.setup(str(path), seed=3, precision="fp32", sha="s1")
    return r, str(path), setup


def test_the_workers_own_set_up_and_trials_parse(role):
    r, path, raw = role
    restored, setup = reference_setup(raw, path)
    assert not restored and setup is not None
    assert setup.init_inputs == [16] and set(setup.state_dict) == {"norm.weight", "norm.bias"}
    made = reference_trials(r.trials([3, 4, 5], ["given", "signed", "scaled"]), path)
    assert not made.large and made.memory["input_bytes"] == 4 * 16 * 4
    assert [type(t) for t in made.trials] == [RefTrial] * 3
    first = made.trials[0]
    assert isinstance(first, RefTrial) and first.outputs["meta"][0]["shape"] == [4] and first.repeat is not None
    assert set(first.oracle) >= {"outputs64"}


def test_a_problem_kept_set_up_is_restored_without_a_second_set_up(role):
    r, path, _ = role
    r.setup(str(path), seed=4, precision="fp32", sha="s1")  # another problem between two judgements of this one
    assert reference_setup(r.setup(str(path), seed=3, precision="fp32", sha="s1", known=True), path) == (True, None)


def test_a_refused_distribution_is_a_skipped_trial(tmp_path):
    from kernelmosaic.verify.sandbox.kmworker.reference import ReferenceRole

    path = tmp_path / "sqrt.py"  # the square root of signed inputs is NaN: that trial cannot be made
    path.write_text(PROBLEM.replace("torch.log(self.norm(x).exp().sum(dim=-1))", "torch.sqrt(x)"))
    r = ReferenceRole("cpu")
    r.setup(str(path), seed=0, precision="fp32")
    made = reference_trials(r.trials([0, 1], ["given", "signed"]), str(path))
    skipped = made.trials[1]
    assert isinstance(made.trials[0], RefTrial)
    assert isinstance(skipped, SkippedTrial) and skipped.why == "non-finite reference outputs"


@pytest.mark.parametrize(("change", "field"), [
    (lambda t: t["trials"][0].pop("outputs"), "trials.0.trial.outputs"),
    (lambda t: t["trials"][0].update(skipped="no"), "trials.0"),
    (lambda t: t["trials"][0].update(mutates_inputs=1), "trials.0.trial.mutates_inputs"),
    (lambda t: t.update(trials=[]), "trials"),
    (lambda t: t["memory"].update(input_bytes=1.5), "memory.input_bytes"),
    (lambda t: t.pop("large"), "large"),
])
def test_a_malformed_trials_reply_is_bad_problem_naming_the_field(role, change, field):
    r, path, _ = role
    raw = r.trials([3], ["given"])
    change(raw)
    with pytest.raises(Stop) as stop:
        reference_trials(raw, path)
    assert stop.value.status == Status.bad_problem
    assert f"the trials of {path}: {field}:" in stop.value.message


def test_a_set_up_without_its_weights_is_bad_problem(role):
    r, path, _ = role
    raw = r.setup(str(path), seed=9, precision="fp32", sha="s2")
    raw["state_dict"] = {"norm.weight": [1.0] * 16}
    with pytest.raises(Stop) as stop:
        reference_setup(raw, path)
    assert stop.value.status == Status.bad_problem and "state_dict.norm.weight" in stop.value.message


def test_large_output_trials_carry_their_seed(role):
    r, path, _ = role
    made = reference_trials(r.trials([3, 4], ["given", "signed"], large_bytes=8), path)
    assert made.large and all(isinstance(t, RefTrial) and t.large and t.seed is not None for t in made.trials)
    raw = r.trials([3], ["given"], large_bytes=8)
    raw["trials"][0].pop("seed")
    with pytest.raises(Stop, match="a large-output trial carries no seed"):
        reference_trials(raw, path)
    assert all(x.is_meta for t in made.trials if isinstance(t, RefTrial) for x in t.inputs if isinstance(x, torch.Tensor))
