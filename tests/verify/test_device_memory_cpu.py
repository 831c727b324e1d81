"""Who is at fault, on the CPU device with real workers: an out-of-memory while another judgement holds the device,
a candidate that makes the reference fail on the inputs it reports, a reference that refuses one of the verifier's
own input transforms.

The device's memory is simulated honestly: the problem (and a candidate with a workspace) allocates through a
ledger file that says what other judgements hold on a 64 MiB "device", and raises torch's own `OutOfMemoryError`
(with CUDA's wording) when its request does not fit. The other judgement is a thread that writes the ledger while
holding the device's lock shared, as a neighbour's calls do, and lets both go a few seconds after the verifier ran
out: only a verifier that waits for the device alone before judging again can pass."""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from pathlib import Path

import pytest

from kernelmosaic.verify import Status, Verifier, VerifyConfig
from kernelmosaic.verify.devlock import timing_lock

from . import kit

pytestmark = pytest.mark.slow

MIB = 1 << 20
HOLD_S = 4.0
"""How long the neighbour keeps its memory and the device after the verifier first ran out."""

SIMULATED_DEVICE = '''
from pathlib import Path as _Path

_LEDGER = _Path({ledger!r})
_LIMIT = 64 << 20


def _allocate(nbytes):
    """Take `nbytes` of the simulated device, whose other tenants are listed in the ledger."""
    held = int(_LEDGER.read_text() or 0) if _LEDGER.exists() else 0
    if held + nbytes > _LIMIT:
        (_LEDGER.parent / "refused").write_text(str(nbytes))
        raise torch.OutOfMemoryError(
            f"CUDA out of memory. Tried to allocate {{nbytes / 2**20:.2f}} MiB. GPU 0 has a total capacity of 64 MiB "
            f"of which {{(_LIMIT - held) / 2**20:.2f}} MiB is free. Process 627 has {{held / 2**20:.2f}} MiB memory in use")
    return torch.zeros(nbytes // 4)  # zeros: the problem adds 0 * workspace, and 0 * NaN (stale memory) is NaN
'''

PROBLEM = '''\
import torch
import torch.nn as nn
{device}
n = 4096


class Model(nn.Module):
    def forward(self, a, b):
        workspace = _allocate({need})
        return torch.relu(a + b) + 0 * workspace[:1].sum()


def get_inputs():
    return [torch.randn(n), torch.randn(n)]


def get_init_inputs():
    return []
'''


def _problem(folder: Path, need: int) -> Path:
    device = SIMULATED_DEVICE.format(ledger=str(folder / "ledger"))
    return kit.write(folder, "problem.py", PROBLEM.format(device=device, need=need))


def _candidate(folder: Path, need: int) -> Path:
    """An honest add+relu through the suite's extension, with a scratch workspace taken from the simulated device."""
    extra = SIMULATED_DEVICE.format(ledger=str(folder / "ledger"))
    forward = f"scratch = _allocate({need})\n        return ext.add_relu(a, b)"
    return kit.write(folder, "candidate.py", kit.candidate(forward, extra=extra))


_FOLDERS: list[Path] = []


def _device_folder(cache: Path) -> Path:
    """The simulated device's ledger lives in /dev/shm: the one folder outside their scratch that candidate workers
    may write (the isolation layers keep them out of the rest, the build cache included). `cache` is unused."""
    folder = Path(tempfile.mkdtemp(prefix="km-test-sim-device-", dir="/dev/shm"))
    _FOLDERS.append(folder)
    return folder


@pytest.fixture(scope="module", autouse=True)
def _remove_device_folders():
    yield
    for folder in _FOLDERS:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def verifier(build_cache):
    # static checks off: the simulated device lives in the files (a candidate reading a file is a static finding)
    config = VerifyConfig(device="cpu", trials=3, cache_dir=build_cache, static_checks=False, timing_budget_ms=20,
                          timing_rounds=1, compile_baseline=False, run_timeout_s=30)
    with Verifier(config) as v:
        yield v


class Neighbour(threading.Thread):
    """Another judgement: holds `nbytes` of the simulated device and the device's lock shared, until `HOLD_S` after
    the verifier's first refusal (or for good with `forever`, like a process holding memory while idle: no lock)."""

    def __init__(self, folder: Path, cache: Path, nbytes: int, forever: bool = False) -> None:
        super().__init__(daemon=True)
        self.folder, self.cache, self.nbytes, self.forever = folder, cache, nbytes, forever
        self.holding = threading.Event()
        self.released_at = 0.0

    def run(self) -> None:
        ledger = self.folder / "ledger"
        if self.forever:
            ledger.write_text(str(self.nbytes))
            self.holding.set()
            return
        with timing_lock(self.cache, "cpu", shared=True):
            ledger.write_text(str(self.nbytes))
            self.holding.set()
            deadline = time.monotonic() + 240
            while not (self.folder / "refused").exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(HOLD_S)
            ledger.write_text("0")
            self.released_at = time.monotonic()


@pytest.mark.parametrize("who", ["reference", "candidate"])
def test_an_oom_beside_another_judgement_is_judged_again_alone(verifier, build_cache, who):
    tmp_path = _device_folder(build_cache)
    problem = _problem(tmp_path, need=32 * MIB if who == "reference" else 1 * MIB)
    candidate = _candidate(tmp_path, need=32 * MIB if who == "candidate" else 1 * MIB)
    verifier.compile(candidate)  # built before the neighbour comes: its hold is for the judgement
    neighbour = Neighbour(tmp_path, build_cache, 40 * MIB)
    neighbour.start()
    assert neighbour.holding.wait(30)
    verdict = verifier.verify(problem, candidate, timing=False)
    done = time.monotonic()
    neighbour.join(30)
    assert (tmp_path / "refused").exists()  # it did run out beside the neighbour
    assert verdict.status == Status.accepted, verdict.message
    assert f"the {who} ran out of device memory with the device shared" in verdict.device_alone
    assert "CUDA out of memory" in verdict.device_alone
    assert verdict.phase_seconds["oom_retry"] > 0
    # judged again only once the neighbour let the device go, and it waited for it
    assert neighbour.released_at and done > neighbour.released_at
    assert verdict.phase_seconds["device_lock_wait"] >= HOLD_S / 2
    assert verdict.correctness.passed == verdict.correctness.trials == 3
    assert verdict.message.startswith("correct on 3/3 trials")


def test_a_reference_that_cannot_fit_alone_is_the_problems(verifier, build_cache):
    """Memory held by another process at rest (no lock) leaves no room even alone: the problem's, with the figures."""
    tmp_path = _device_folder(build_cache)
    Neighbour(tmp_path, build_cache, 40 * MIB, forever=True).run()
    verdict = verifier.verify(_problem(tmp_path, need=32 * MIB), _candidate(tmp_path, need=1 * MIB), timing=False)
    assert verdict.status == Status.bad_problem, verdict.message
    assert "ran out of device memory with the device held alone" in verdict.message
    assert "Process 627 has 40.00 MiB memory in use" in verdict.message
    assert verdict.device_alone  # it did try alone


def test_a_candidate_that_cannot_fit_alone_is_rejected(verifier, build_cache):
    tmp_path = _device_folder(build_cache)
    verdict = verifier.verify(_problem(tmp_path, need=1 * MIB), _candidate(tmp_path, need=80 * MIB), timing=False)
    assert verdict.status == Status.resource_error, verdict.message
    assert "the candidate ran out of device memory with the device held alone" in verdict.message
    assert "Tried to allocate 80.00 MiB" in verdict.message


# A model's cheat: past the correctness trials, shrink the inputs behind the harness's back so that checking a timed
# call against the reference blows up in the reference ("a broken problem") instead of showing the slow kernel.
REBINDS_DATA = '''\
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""{cpp}"""

fused = load_inline(name="km_test_ext", cpp_sources=cpp_source, functions={functions!r}, extra_cflags=["-O2"],
                    verbose=True)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.op = fused.add_relu
        self.calls = 0

    def forward(self, a, b):
        self.calls += 1
        out = self.op(a, b)
        if self.calls > 12:  # the harness is timing by now
            a.data = a.data[: a.numel() // 2]
        return out
'''


def test_a_candidate_rebinding_its_inputs_during_timing_is_rejected_not_bad_problem(verifier, tmp_path):
    """Which check sees it first depends on where the round's fully checked call falls (before or after the cheat's
    12th call): the timing reply's inputs (`candidate-reported-inputs`) or the bursts' fingerprints, whose reused
    input sets it shrinks. Either way the candidate is rejected, and nothing of it reaches the reference as a failure."""
    problem = kit.write(tmp_path, "problem.py", kit.PROBLEM_ADD_RELU)
    cand = kit.write(tmp_path, "candidate.py", REBINDS_DATA.format(cpp=kit.CPP, functions=kit.FUNCTIONS))
    verdict = verifier.verify(problem, cand, timing=True)
    assert verdict.status in (Status.runtime_error, Status.output_mismatch), verdict.message
    rule = verdict.rejected_by[0].rule
    assert rule in ("candidate-reported-inputs", "burst-output-fingerprint", "timed-output-fingerprint"), rule
    if rule == "candidate-reported-inputs":
        assert "forward changed its inputs during timing: input 0 of the timed call checked in full is (2048,)" \
            in verdict.message
        assert "x.data" in verdict.rejected_by[0].message  # says what is refused and what is accepted


# The problem states its contract in code: the two inputs share their signs. A sign flip of each input on its own
# breaks it, so the reference refuses those inputs; the problem's own inputs and scaled ones are fine.
SIGN_BOUND = '''\
import torch
import torch.nn as nn

n = 4096


class Model(nn.Module):
    def forward(self, a, b):
        if not torch.equal(a > 0, b > 0):
            raise ValueError("a and b must have the same signs")
        return torch.relu(a + b)


def get_inputs():
    a = torch.randn(n)
    return [a, 2.0 * a]


def get_init_inputs():
    return []
'''


def test_a_reference_refusing_a_verifier_transform_skips_that_trial(verifier, tmp_path):
    problem = kit.write(tmp_path, "problem.py", SIGN_BOUND)
    cand = kit.write(tmp_path, "candidate.py", kit.candidate("return ext.add_relu(a, b)"))
    verdict = verifier.verify(problem, cand, timing=False)
    assert verdict.status == Status.accepted, verdict.message
    assert verdict.correctness.distributions == ["given", "scaled"]
    assert verdict.correctness.trials == verdict.correctness.passed == 2


def test_a_reference_refusing_its_own_inputs_is_bad_problem(verifier, tmp_path):
    problem = kit.write(tmp_path, "problem.py", SIGN_BOUND.replace("[a, 2.0 * a]", "[a, -a]"))
    cand = kit.write(tmp_path, "candidate.py", kit.candidate("return ext.add_relu(a, b)"))
    verdict = verifier.verify(problem, cand, timing=False)
    assert verdict.status == Status.bad_problem, verdict.message
    assert "a and b must have the same signs" in verdict.message
