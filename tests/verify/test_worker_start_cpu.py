"""A worker that never comes up is the machine's failure, not the candidate's: no verdict is made (no `timeout` or
`crash` charged to a candidate whose code never ran), the Python API raises `WorkerStartFailed`, and `verify` says
nothing was judged and exits 2. The workers are made unable to start for real: an address-space cap far below what
Python and torch need to load (on the H200 host, a compile worker that took over 120 s to start under load was
once reported as the candidate's `timeout`)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kernelmosaic.verify import Verifier, VerifyConfig
from kernelmosaic.verify.pool import WorkerStartFailed

from . import kit

CANDIDATE = '''\
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, a, b):
        return torch.relu(a + b)
'''

STARVED = {"memory_limit_gb": 0.05, "static_checks": False}  # 50 MB of address space: torch cannot load


def test_no_verdict_when_no_worker_can_start(tmp_path):
    problem = kit.write(tmp_path, "problem.py", kit.PROBLEM_ADD_RELU)
    candidate = kit.write(tmp_path, "candidate.py", CANDIDATE)
    config = VerifyConfig(device="cpu", cache_dir=tmp_path / "cache", compile_baseline=False, trials=1, **STARVED)
    with Verifier(config) as verifier, pytest.raises(WorkerStartFailed) as caught:
        verifier.verify(problem, candidate, timing=False)
    assert "during start" in caught.value.detail


def test_verify_says_nothing_was_judged(tmp_path):
    problem = kit.write(tmp_path, "problem.py", kit.PROBLEM_ADD_RELU)
    candidate = kit.write(tmp_path, "candidate.py", CANDIDATE)
    sets = [arg for key, value in STARVED.items() for arg in ("--set", f"verify.{key}={str(value).lower()}")]
    done = subprocess.run([sys.executable, "-m", "kernelmosaic", "verify", "--device", "cpu", "--no-timing",
                           "--trials", "1", *sets, "--set", f"verify.cache_dir={tmp_path / 'cache'}",
                           str(problem), str(candidate)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "could not start a worker" in done.stderr and "Nothing was judged" in done.stderr, done.stderr
    assert "rejected" not in done.stdout, done.stdout
