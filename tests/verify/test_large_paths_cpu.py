"""Large-output mode's other paths on the CPU device (threshold 0, a small problem): the timed call checked in full,
the calls picked from the wall-clock burst and the kernel probes catch in this mode what they catch in the ordinary one, while
this process caps every message of a judgement below the size of one output, so nothing of output size crosses a
socket. The ordinary mode under the same cap fails: the cap is what holds the large mode to its word.

The problem is `kit.PROBLEM_ADD_RELU` with 2^17 elements (512 KiB per output); every candidate uses `kit.CPP` (one
extension build per session)."""

from __future__ import annotations

import pytest

from kernelmosaic.verify import Status, Verifier, VerifyConfig
from kernelmosaic.verify.sandbox.kmworker import protocol

from . import kit

pytestmark = pytest.mark.slow

N = 1 << 17
OUTPUT_BYTES = 4 * N
CAP = OUTPUT_BYTES // 2
"""Every message either way between this process and a worker stays under half an output (and of an input)."""

PROBLEM = kit.PROBLEM_ADD_RELU.replace("n = 4096", f"n = {N}")


def _stateful(forward: str, init: str = "") -> str:
    """`kit.candidate` with a call counter and extra state in `__init__`."""
    head = f"\n    def __init__(self):\n        super().__init__()\n        self.calls = 0\n{init}"
    return kit.candidate("self.calls += 1\n        " + forward).replace(
        "class ModelNew(nn.Module):\n", "class ModelNew(nn.Module):" + head + "\n")


HONEST = kit.candidate("return ext.add_relu(a, b)")
# The correctness trials (3, the first run twice) and the refill (3) are calls 1-7; every later call, the timed
# ones among them, leaves the ReLU out: only the timing checks can see it.
WRONG_WHEN_TIMED = _stateful("if self.calls > 7:\n            return ext.add_only(a, b)\n        "
                             "return ext.add_relu(a, b)")
# Right on every timed call; answers each call of the wall-clock burst (calls microseconds apart, no fresh draw
# between them) with the output of the call before it.
STALE_IN_BURST = "import time\n" + _stateful(
    "gap = time.perf_counter() - self.returned\n"
    "        out = ext.add_relu(a, b)\n        previous, self.last = self.last, out\n"
    "        self.returned = time.perf_counter()\n"
    "        return previous if previous is not None and gap < 2e-4 else out",
    "        self.last = None\n        self.returned = 0.0\n")
# The extension runs, and forward returns PyTorch's own result: the kernel is a decoy only the probe can see.
DECOY = kit.candidate("unused = ext.add_relu(a, b)\n        return torch.relu(a + b)")


def _config(build_cache, large: int) -> VerifyConfig:
    return VerifyConfig(device="cpu", trials=3, cache_dir=build_cache, static_checks=False, timing_budget_ms=20,
                        timing_rounds=2, compile_baseline=False, derive_alt=False, run_timeout_s=60,
                        large_output_bytes=large, seed=20261204)


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
    return kit.write(tmp_path_factory.mktemp("large-paths"), "problem.py", PROBLEM)


@pytest.fixture
def capped(monkeypatch):
    """This process refuses to send, and to read, any message of `CAP` bytes or more (`protocol.Channel`); every
    worker message passes through it."""
    monkeypatch.setattr(protocol, "MAX_MESSAGE_BYTES", CAP)


def _rules(v) -> set[str]:
    return {f.rule for f in v.findings}


def test_the_cap_stops_the_ordinary_mode(ordinary, problem, tmp_path, capped):
    v = ordinary.verify(problem, kit.write(tmp_path, "honest.py", HONEST))
    assert not v.accepted
    assert "exceeds" in v.message and "limit" in v.message, v.message


def test_an_honest_candidate_is_accepted_with_every_check_in_place(large, problem, tmp_path, capped):
    v = large.verify(problem, kit.write(tmp_path, "honest.py", HONEST))
    assert v.accepted, v.message
    assert "large-output-mode" in _rules(v)
    assert v.timing is not None and v.timing.timed_calls_checked >= 2 * 2  # each round: the full one and a subset
    assert v.custom is not None and [k.reaches_output for k in v.custom.kernels] == [True]


def test_the_probe_reports_the_same_in_both_modes(large, ordinary, problem, tmp_path):
    """The probe's noise comes from the same seeds, so the perturbed forward and its comparison are the same."""
    path = kit.write(tmp_path, "honest.py", HONEST)
    in_place, at_home = large.verify(problem, path), ordinary.verify(problem, path)
    assert in_place.accepted and at_home.accepted
    assert [k.model_dump() for k in in_place.custom.kernels] == [k.model_dump() for k in at_home.custom.kernels]


def test_a_candidate_wrong_only_when_timed_is_caught_by_the_full_check(large, problem, tmp_path, capped):
    v = large.verify(problem, kit.write(tmp_path, "wrong_when_timed.py", WRONG_WHEN_TIMED))
    assert v.status == Status.output_mismatch, v.message
    assert "timed-output-check" in _rules(v), v.findings  # the full check: it runs before the fingerprints
    assert v.correctness.passed == v.correctness.trials == 3  # right where it was not timed
    assert "outside the error budget" in v.message


def test_the_ordinary_mode_catches_the_same_candidate_the_same_way(ordinary, problem, tmp_path):
    v = ordinary.verify(problem, kit.write(tmp_path, "wrong_when_timed.py", WRONG_WHEN_TIMED))
    assert v.status == Status.output_mismatch and "timed-output-check" in _rules(v), v.message


def test_a_stale_answer_to_the_burst_is_caught_over_two_input_sets(large, problem, tmp_path, capped):
    """Large-output mode's bursts rotate over two input sets (`timing.LARGE_BURST_SETS`): the previous call's output
    is still the wrong one for the last call's set."""
    v = large.verify(problem, kit.write(tmp_path, "stale_in_burst.py", STALE_IN_BURST))
    assert v.status == Status.output_mismatch, v.message
    assert _rules(v) >= {"burst-output-fingerprint"}, v.findings


def test_a_decoy_kernel_is_caught_by_the_probe_in_place(large, problem, tmp_path, capped):
    v = large.verify(problem, kit.write(tmp_path, "decoy.py", DECOY))
    assert v.status == Status.output_mismatch, v.message
    assert "kernel-output-unused" in _rules(v), v.findings
    assert "noise in its output left the result within tolerance" in v.message + str(v.findings)
