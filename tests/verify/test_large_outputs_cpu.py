"""Large-output mode on the CPU device (threshold 0, small shapes): the reference worker compares the candidate's
outputs in place, one trial at a time, and verdicts are those of the ordinary mode; this process never receives a
trial's data; the reference holds one trial at a time; descriptors that do not hold what they say are refused."""

from __future__ import annotations

import os
import socket

import pytest
import torch

from kernelmosaic.verify import Status, Verifier, VerifyConfig
from kernelmosaic.verify.pool import WorkerError
from kernelmosaic.verify.sandbox.kmworker.protocol import Channel
from kernelmosaic.verify.sandbox.kmworker.shared import MAILBOX, export_tensors, import_tensors
from kernelmosaic.verify.slot import DeviceSlot

from . import kit

pytestmark = pytest.mark.slow

N = 4096  # kit.PROBLEM_ADD_RELU's size

HONEST = kit.candidate("return ext.add_relu(a, b)")
WRONG = kit.candidate("return ext.add_only(a, b)")
UNINITIALISED = kit.candidate("return ext.half_written(a, b)")


def _config(build_cache, large: int) -> VerifyConfig:
    return VerifyConfig(device="cpu", trials=3, cache_dir=build_cache, timing=False, run_timeout_s=60,
                        large_output_bytes=large, seed=20261203)  # one seed: both modes see the same inputs


@pytest.fixture(scope="module")
def large(build_cache):
    with Verifier(_config(build_cache, 0)) as v:
        yield v


@pytest.fixture(scope="module")
def ordinary(build_cache):
    with Verifier(_config(build_cache, 1 << 30)) as v:
        yield v


@pytest.fixture(scope="module")
def problem(tmp_path_factory):
    return kit.write(tmp_path_factory.mktemp("large"), "problem.py", kit.PROBLEM_ADD_RELU)


def test_honest_candidate_is_accepted_and_flagged_as_large(large, problem, tmp_path):
    v = large.verify(problem, kit.write(tmp_path, "honest.py", HONEST))
    assert v.accepted, v.message
    assert v.correctness.passed == v.correctness.trials == 3
    assert v.correctness.distributions == ["given", "scaled", "signed"]
    flags = [f for f in v.findings if f.rule == "large-output-mode"]
    assert flags and flags[0].severity == "flag" and "0 MiB per trial" in flags[0].message
    assert v.custom is not None and [k.reaches_output for k in v.custom.kernels] == [True]


MUTATES = kit.candidate("out = ext.add_relu(a, b); a.zero_(); return out")
FLAKY = kit.stateful("return ext.add_relu(a, b) if self.calls % 2 else ext.add_only(a, b)")  # the repeat run differs


@pytest.mark.parametrize("name, source, status", [("wrong", WRONG, Status.output_mismatch),
                                                  ("uninitialised", UNINITIALISED, Status.output_mismatch),
                                                  ("mutates_input", MUTATES, Status.integrity_violation),
                                                  ("flaky", FLAKY, Status.nondeterministic)])
def test_wrong_candidates_get_the_ordinary_modes_status_and_message(large, ordinary, problem, tmp_path, name, source,
                                                                     status):
    path = kit.write(tmp_path, f"{name}.py", source)
    in_place, at_home = large.verify(problem, path), ordinary.verify(problem, path)
    assert in_place.status == at_home.status == status
    assert in_place.message == at_home.message
    assert in_place.correctness.detail == at_home.correctness.detail
    assert any(f.rule == "large-output-mode" for f in in_place.findings)
    assert not any(f.rule == "large-output-mode" for f in at_home.findings)


def test_the_parent_holds_no_trial_data_and_the_reference_one_trial(build_cache, problem):
    slot = DeviceSlot("cpu", _config(build_cache, 0))
    try:
        refdata = slot.reference(str(problem), "sha-large")
        assert refdata.large
        tensors = [t for tr in refdata.usable for t in [*tr.inputs, *tr.outputs["tensors"]]]
        assert tensors and all(t.is_meta for t in tensors)  # shapes and dtypes only
        assert not refdata.usable[0].oracle and refdata.usable[0].repeat is None
        per_trial = N * (4 + 8 + 4)  # fp32 outputs, float64 oracle, terms kept in float32
        for tr in refdata.usable:
            held = slot.ref.call("large_trial", 30, seed=tr.seed, distribution=tr.distribution)
            fds = slot.ref.channel.take_fds()
            try:
                assert held["held_bytes"] == per_trial  # the previous trial was let go
                assert held["held_seed"] == tr.seed
                assert len(fds) == 2 and all(os.fstat(fd).st_size == N * 4 for fd in fds)  # the inputs a and b
            finally:
                for fd in fds:
                    os.close(fd)
        slot.ref.call("release_held", 30)  # what a judgement does when its trials end
        with pytest.raises(WorkerError, match="no trial is held"):
            slot.ref.call("compare_held", 30, outputs={"tuple": False, "meta": [], "tensors": []}, atol=0.0, rtol=0.0)
    finally:
        slot.close()


def test_a_candidate_that_shrinks_its_shared_output_is_refused_not_mapped():
    """An unsealed memfd could be shrunk under the reference's mapping (SIGBUS in the trusted worker)."""
    fd = os.memfd_create("hostile")
    os.ftruncate(fd, N * 4)
    desc = {"kind": "fd", "shape": [N], "dtype": "float32", "index": 0, "nbytes": N * 4}
    try:
        with pytest.raises(ValueError, match="not sealed"):
            import_tensors([desc], [fd], "cpu")
        with pytest.raises(ValueError, match="bytes for shape"):
            import_tensors([{**desc, "shape": [2 * N]}], [fd], "cpu")
        with pytest.raises(ValueError, match="did not come with the message"):
            import_tensors([{**desc, "index": 3}], [fd], "cpu")
    finally:
        os.close(fd)


def test_tensors_cross_as_descriptors_over_the_channel():
    left, right = socket.socketpair()
    sender, receiver = Channel(left), Channel(right)
    x, idx = torch.randn(64, 3), torch.arange(7)
    try:
        descs = export_tensors([x, 2, idx, torch.empty(0, 3)])
        sender.attach(MAILBOX.outgoing)
        sender.send({"tensors": descs})
        for fd in MAILBOX.outgoing:
            os.close(fd)
        MAILBOX.outgoing.clear()
        message = receiver.recv()
        fds = receiver.take_fds()
        got = import_tensors(message["tensors"], fds, "cpu")
        assert torch.equal(got[0], x) and got[1] == 2 and torch.equal(got[2], idx) and got[3].shape == (0, 3)
        for fd in fds:
            os.close(fd)
        sender.send({"plain": True})  # no descriptors: nothing left over from the last message
        assert receiver.recv() == {"plain": True} and receiver.take_fds() == []
    finally:
        sender.close()
        receiver.close()


def test_an_oversized_message_is_refused_by_its_sender_with_its_size(monkeypatch):
    from kernelmosaic.verify.sandbox.kmworker import protocol

    monkeypatch.setattr(protocol, "MAX_MESSAGE_BYTES", 1 << 16)
    left, right = socket.socketpair()
    sender = Channel(left)
    try:
        with pytest.raises(ValueError, match=r"a message of 0\.00 GiB exceeds the 0\.00 GiB limit"):
            sender.send({"outputs": torch.zeros(1 << 15)})  # 128 KiB of data
        sender.send({"ok": True})  # nothing of the refused message went out
        assert Channel(right).recv() == {"ok": True}
    finally:
        left.close()
        right.close()


def test_timed_calls_are_checked_in_the_reference_worker_by_seed(build_cache, problem, tmp_path):
    """With timing on, the checked timed call's inputs are named by their seed and its outputs compared in the
    reference worker (`check_given`); every timed call is still checked."""
    config = _config(build_cache, 0).model_copy(update={"timing": True, "timing_budget_ms": 20, "timing_rounds": 2,
                                                         "compile_baseline": False, "derive_alt": False})
    with Verifier(config) as v:
        verdict = v.verify(problem, kit.write(tmp_path, "honest.py", HONEST))
    assert verdict.accepted, verdict.message
    assert verdict.timing is not None and verdict.timing.timed_calls_checked >= 2


def test_the_reference_checks_a_call_it_redraws_from_its_seed(build_cache, problem):
    from kernelmosaic.verify.sandbox.kmworker.common import package_outputs
    from kernelmosaic.verify.sandbox.kmworker.inputs import InputTemplate

    config = _config(build_cache, 0)
    slot = DeviceSlot("cpu", config)
    try:
        slot.reference(str(problem), "sha-large-seed")
        torch.manual_seed(config.seed)  # the problem's own inputs at the set-up seed: what both templates come from
        a, b = torch.randn(N), torch.randn(N)
        drawn = InputTemplate([a, b]).drawer("cpu")(12345)
        atol, rtol = config.tolerances()

        def check(out: torch.Tensor) -> dict:
            res = slot.ref.call("check_given", 30, seed=12345, outputs=package_outputs(out), atol=atol, rtol=rtol)
            return res["comparison"]

        assert check(torch.relu(drawn[0] + drawn[1]))["status"] == "accepted"
        wrong = check(drawn[0] + drawn[1])
        assert wrong["status"] == "output_mismatch" and "outside the error budget" in wrong["detail"]
    finally:
        slot.close()
