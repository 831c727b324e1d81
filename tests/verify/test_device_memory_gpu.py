"""On a CUDA GPU (scripts/gpu/gpu-check): a judgement beside a neighbour that holds most of the device's memory is not
charged for it. The neighbour is another process that allocates real device memory while holding the device's lock
shared, as another judgement's calls do, and lets both go after a while; the honest candidate must be accepted, with
the verdict saying it held the device alone. A candidate that wants more memory than the device has is the
candidate's `resource_error`, not `bad_problem`."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
import torch

from kernelmosaic.verify import Status, Verifier, VerifyConfig

from . import gpu_kit as gk
from . import kit

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

GIB = 1 << 30
PROBLEM_BIG = gk.PROBLEM_ADD_RELU.replace("n = 1 << 24", "n = 1 << 30")  # 4 GiB an input, 4 GiB the output

HOLD = r'''
import fcntl, os, sys, time
import torch


def hold(keep_gib, hold_s):
    """All but `keep_gib` GiB of the device's free memory, written to and held for `hold_s` seconds, then let go."""
    free, total = torch.cuda.mem_get_info()
    block = torch.empty(int(free - keep_gib * (1 << 30)), dtype=torch.uint8, device="cuda")
    block.fill_(1)
    torch.cuda.synchronize()
    print("holding", flush=True)
    time.sleep(hold_s)
    del block
    torch.cuda.empty_cache()
'''

NEIGHBOUR = HOLD + r'''
from kernelmosaic.verify.devlock import lock_path

cache, key, keep_gib, hold_s = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
path = lock_path(cache, key)
path.parent.mkdir(parents=True, exist_ok=True)
with open(path, "a+") as f:
    fcntl.flock(f.fileno(), fcntl.LOCK_SH)
    hold(keep_gib, hold_s)
'''

WANTS_TOO_MUCH = gk.cuda_candidate("ext.add_relu(a, b) + 0 * torch.empty(200 * (1 << 30), dtype=torch.uint8, "
                                   "device=a.device)[:1].float()")


@pytest.fixture(scope="module")
def verifier(build_cache):
    config = VerifyConfig(device="cuda", trials=3, cache_dir=build_cache, compile_baseline=False, judges_per_gpu=2)
    with Verifier(config) as v:
        yield v


def test_an_honest_judgement_beside_a_memory_hungry_neighbour_is_accepted(verifier, build_cache, tmp_path):
    problem = kit.write(tmp_path, "problem.py", PROBLEM_BIG)
    candidate = kit.write(tmp_path, "candidate.py", gk.cuda_candidate("ext.add_relu(a, b)"))
    verifier.compile(candidate)  # the build before the neighbour, so its hold covers the judgement only
    key = f"{os.environ.get('CUDA_VISIBLE_DEVICES', '')}/cuda:0"
    neighbour = subprocess.Popen([sys.executable, "-c", NEIGHBOUR, str(build_cache), key, "12", "45"],
                                 stdout=subprocess.PIPE, text=True)
    try:
        assert neighbour.stdout.readline().strip() == "holding"
        started = time.monotonic()
        verdict = verifier.verify(problem, candidate, timing=True)
    finally:
        neighbour.wait(120)
    assert verdict.status == Status.accepted, verdict.message
    assert verdict.device_alone, "the judgement should have held the device alone (admission or retry)"
    assert time.monotonic() - started > 30  # it waited for the neighbour to let the device go


def test_a_candidate_wanting_more_than_the_device_is_its_resource_error(verifier, tmp_path):
    problem = kit.write(tmp_path, "problem.py", gk.PROBLEM_ADD_RELU)
    candidate = kit.write(tmp_path, "candidate.py", WANTS_TOO_MUCH)
    # kernelbench: the allocation is PyTorch code in forward, which `strict` rejects before anything runs
    verdict = verifier.verify(problem, candidate, timing=False, policy="kernelbench")
    assert verdict.status == Status.resource_error, verdict.message
    assert "the candidate ran out of device memory with the device held alone" in verdict.message
    assert "ran out of device memory with the device shared" in verdict.device_alone


IDLE_HOLDER = HOLD + "hold(float(sys.argv[1]), float(sys.argv[2]))\n"  # no lock: not a verifier's process

WANTS_30_GIB = gk.cuda_candidate("ext.add_relu(a, b) + 0 * torch.empty(30 * (1 << 30), dtype=torch.uint8, "
                                 "device=a.device)[:1].float()")


def test_a_device_crowded_by_another_process_judges_nothing(verifier, tmp_path):
    """Another process (no verifier's: it takes no lock) holds all but 10 GiB of the device; a candidate whose 30 GiB
    workspace fits the device but not beside it is not judged (`DeviceCrowded`), not rejected as `resource_error`."""
    from kernelmosaic.verify.pool import DeviceCrowded

    problem = kit.write(tmp_path, "problem.py", gk.PROBLEM_ADD_RELU)
    candidate = kit.write(tmp_path, "candidate.py", WANTS_30_GIB)
    verifier.compile(candidate)
    holder = subprocess.Popen([sys.executable, "-c", IDLE_HOLDER, "10", "240"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "holding"
        with pytest.raises(DeviceCrowded, match="the driver shows"):
            verifier.verify(problem, candidate, timing=False, policy="kernelbench")
    finally:
        holder.kill()
        holder.wait(60)
