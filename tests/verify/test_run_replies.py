"""The candidate worker's non-timing replies are parsed before they are used (verify/run_replies.py). The honest
replies here are made by the worker's own code (`CandidateRole`, in this process, on a plain-PyTorch `ModelNew`);
a reply changed the way native code in the candidate's process could change it is a `worker-reply` rejection that
names the field, where it used to be a KeyError or a crash inside the verifier."""

from __future__ import annotations

import textwrap

import pytest
import torch

from kernelmosaic.contracts.verdict import Status
from kernelmosaic.verify.judgement import Stop
from kernelmosaic.verify.replies import parse_reply
from kernelmosaic.verify.run_replies import (
    InitReply,
    LoadReply,
    PeakReply,
    ProbeReply,
    RefillReply,
    RunReply,
    candidate_reply,
    census_reply,
)

CANDIDATE = textwrap.dedent("""
    import torch

    class ModelNew(torch.nn.Module):
        def __init__(self, n):
            super().__init__()
            self.scale = torch.nn.Parameter(torch.ones(n))

        def forward(self, x):
            return torch.relu(x) * self.scale, x.sum()
""")


@pytest.fixture(scope="module")
def role(tmp_path_factory):
    from kernelmosaic.verify.sandbox.kmworker.candidate import CandidateRole

    folder = tmp_path_factory.mktemp("cand")
    (folder / "candidate.py").write_text(CANDIDATE)
    r = CandidateRole("cpu")
    loaded = r.load(str(folder / "candidate.py"), str(folder / "cache"))
    init = r.init([8], {"scale": torch.full((8,), 2.0)}, seed=1, precision="fp32")
    return r, loaded, init


def _trials():
    g = torch.Generator().manual_seed(0)
    return [[torch.randn(8, generator=g)] for _ in range(3)]


def test_the_workers_own_replies_parse(role):
    r, loaded, init = role
    assert candidate_reply(LoadReply, loaded, "load").integrity == []
    assert candidate_reply(InitReply, init, "init").copied == ["scale"]
    ran = candidate_reply(RunReply, r.run(_trials(), [0, 0]), "run")
    assert len(ran.trials) == 3 and ran.trials[0].repeat is not None and ran.trials[1].repeat is None
    first = ran.trials[0].outputs
    assert first["tuple"] is True and [m["type"] for m in first["meta"]] == ["Tensor", "Tensor"]
    assert torch.equal(first["tensors"][0], torch.relu(_trials()[0][0]) * 2.0)
    assert ran.extra_threads == 0 and ran.aliased == [] and ran.trials[0].mutated == []
    refill = candidate_reply(RefillReply, r.refill(_trials(), [0, 0]), "refill")
    assert len(refill.outputs) == len(refill.versions) == 3
    probe = candidate_reply(ProbeReply, r.probe(_trials()[0], [], seed=5), "probe")
    assert probe.error == "" and probe.outputs is not None and probe.calls == {}  # no extension: no kernel calls
    assert candidate_reply(PeakReply, r.peak_memory(_trials()[0]), "peak_memory").peak_bytes is None  # CPU
    assert census_reply(r.census(_trials()[0])).custom == -1  # no census on the CPU


def _forged(reply: dict, path: tuple, value) -> dict:
    """`reply` with the item at `path` (keys and indices) replaced by `value`, or removed when it is `...`."""
    import copy

    out = copy.deepcopy(reply)
    node = out
    for key in path[:-1]:
        node = node[key]
    if value is ...:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return out


@pytest.mark.parametrize("path, value, field", [
    (("trials",), ..., "trials"),  # the trials' results withheld
    (("trials",), [], "trials"),
    (("trials", 0, "outputs", "tensors", 0), [0.0] * 8, "trials.0.outputs.tensors.0"),  # numbers, not a tensor
    (("trials", 1, "outputs"), ..., "trials.1.outputs"),
    (("trials", 0, "mutated"), "none", "trials.0.mutated"),
    (("extra_threads",), "0", "extra_threads"),  # a string where the worker sends a count
    (("extra_threads",), 0.0, "extra_threads"),
    (("integrity",), None, "integrity"),  # the integrity report withheld
])
def test_a_forged_run_reply_is_a_worker_reply_rejection(role, path, value, field):
    r, _, _ = role
    honest = r.run(_trials(), [0, 0])
    with pytest.raises(Stop) as caught:
        candidate_reply(RunReply, _forged(honest, path, value), "run")
    stop = caught.value
    assert stop.status == Status.integrity_violation and [f.rule for f in stop.findings] == ["worker-reply"]
    assert stop.findings[0].evidence.startswith(f"run: {field}:"), stop.findings[0].evidence


def test_forged_census_probe_and_peak_replies_are_rejected_and_the_references_is_bad_problem(role):
    r, _, _ = role
    census = {"kernels": [{"name": "relu_kernel", "calls": 1, "total_ms": 0.1, "custom": "yes"}], "custom": 1,
              "library": 0}
    with pytest.raises(Stop) as caught:
        census_reply(census)
    assert "kernels.0.custom" in caught.value.findings[0].evidence
    probe = r.probe(_trials()[0], [], seed=5)
    with pytest.raises(Stop) as caught:
        candidate_reply(ProbeReply, {**probe, "forward_s": -1.0}, "probe")
    assert caught.value.findings[0].evidence.startswith("probe: forward_s:")
    with pytest.raises(Stop) as caught:
        candidate_reply(PeakReply, {"peak_bytes": -5, "integrity": []}, "peak_memory")
    assert caught.value.status == Status.integrity_violation
    with pytest.raises(Stop) as caught:  # the reference runs no candidate code: its malformed reply is our problem
        parse_reply(PeakReply, {"peak_bytes": "12"}, "peak_memory", candidate=False)
    assert caught.value.status == Status.bad_problem and not caught.value.findings
