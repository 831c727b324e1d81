"""A call the static view cannot resolve is left to the run time, and the run time decides (CPU, end to end).

The registry candidate (tests/fixtures/static/kernel_launch_unresolved_registry.py) is honest: it is accepted under
both policies with the `kernel-launch-unresolved` flag. Its twin with PyTorch's relu in the registry is rejected:
under `kernelbench` by the run-time probes (no call into the kernel observed), under `strict` statically.
"""

from __future__ import annotations

import pytest
from static_fixtures import FIXTURES

from kernelmosaic.verify import Status, Verifier, VerifyConfig

pytestmark = pytest.mark.slow

PROBLEM = """import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(64, 256)]


def get_init_inputs():
    return []
"""


@pytest.fixture(scope="module")
def verifier(tmp_path_factory):
    config = VerifyConfig(device="cpu", trials=2, cache_dir=tmp_path_factory.mktemp("cache"), timing=False,
                          run_timeout_s=60)
    with Verifier(config) as v:
        yield v


@pytest.fixture(scope="module")
def problem(tmp_path_factory):
    path = tmp_path_factory.mktemp("relu") / "problem.py"
    path.write_text(PROBLEM)
    return path


@pytest.mark.parametrize("policy", ["strict", "kernelbench"])
def test_unresolved_registry_is_accepted_with_the_flag(verifier, problem, policy):
    v = verifier.verify(problem, FIXTURES / "kernel_launch_unresolved_registry.py", policy=policy)
    assert v.accepted, v.message
    assert "kernel-launch-unresolved" in {f.rule for f in v.findings if f.severity == "flag"}
    assert v.custom is not None and any(k.reaches_output for k in v.custom.kernels)


def test_registry_hiding_pytorch_is_rejected_at_run_time_under_kernelbench(verifier, problem):
    v = verifier.verify(problem, FIXTURES / "no_kernel_launched_unresolved_hides_torch.py", policy="kernelbench")
    assert not v.accepted and v.status == Status.no_custom_kernel, v.message
    assert "kernel-output-unverified" in {f.rule for f in v.findings if f.severity == "reject"}


def test_registry_hiding_pytorch_is_rejected_statically_under_strict(verifier, problem):
    v = verifier.verify(problem, FIXTURES / "no_kernel_launched_unresolved_hides_torch.py", policy="strict")
    assert not v.accepted and v.status == Status.no_custom_kernel, v.message
    assert v.message.startswith("no-kernel-launched (line")
