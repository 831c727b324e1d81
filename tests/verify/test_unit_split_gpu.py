"""On a CUDA GPU (scripts/gpu/gpu-check), issue 39: a CUDA unit built as two (`kmworker/unit_split.py`: device code
without torch's headers, host code lean, each launch lowered to nvcc's own push-configuration-then-stub call) runs
as the unit as written does: a templated functor kernel launched with deduced arguments, a kernel dispatched over
float and double, and a static kernel with launch bounds and dynamic shared memory give torch's results, and a
candidate built that way is judged and accepted."""

from __future__ import annotations

import os
import sys

import pytest
import torch

from kernelmosaic.verify import Verifier, VerifyConfig
from kernelmosaic.verify.sandbox.kmworker import build_steps, nvcc_split, unit_split

from . import kit
from .test_unit_split import UNIT

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

DECL = ("torch::Tensor scale(torch::Tensor x, double s);\ntorch::Tensor shift(torch::Tensor x, double b);\n"
        "torch::Tensor row_sums(torch::Tensor x);\n")

PROBLEM = '''\
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return (x * 0.5 + 0.25).sum(dim=1)


def get_inputs():
    return [torch.randn(4096, 1024)]


def get_init_inputs():
    return []
'''

CANDIDATE = f'''\
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

ext = load_inline(name="km_units_gpu", cpp_sources=r"""{DECL}""", cuda_sources=r"""{UNIT}""",
                  functions=["scale", "shift", "row_sums"], extra_cuda_cflags=["-O3"], verbose=True)


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.row_sums(ext.shift(ext.scale(x.contiguous(), 0.5), 0.25))
'''


def test_a_split_build_gives_torchs_results(tmp_path, monkeypatch):
    from torch.utils.cpp_extension import _join_cuda_home, load_inline

    monkeypatch.setenv("PYTORCH_NVCC", f"{sys.executable} -I {nvcc_split.__file__}")
    monkeypatch.setenv(nvcc_split.REAL_NVCC, _join_cuda_home("bin", "nvcc"))
    monkeypatch.setenv(unit_split.SWITCH, "1")
    ext = load_inline("km_units_direct", DECL, cuda_sources=UNIT, functions=["scale", "shift", "row_sums"],
                      extra_cuda_cflags=build_steps.nvcc_time_flags(tmp_path), build_directory=str(tmp_path))
    assert (tmp_path / ("cuda" + unit_split.DEVICE_SUFFIX)).is_file()
    assert not (tmp_path / "cuda.km-units.log").exists(), (tmp_path / "cuda.km-units.log").read_text()
    assert any(k.startswith("nvcc:units device") for k in build_steps.steps(tmp_path))
    x = torch.randn(1000, 333, device="cuda")
    torch.testing.assert_close(ext.scale(x, 1.5), x * 1.5)
    torch.testing.assert_close(ext.shift(x, 0.25), x + 0.25)
    xd = x.double()
    torch.testing.assert_close(ext.shift(xd, -2.0), xd - 2.0)  # the double instance, from AT_DISPATCH
    torch.testing.assert_close(ext.row_sums(x), x.sum(1), rtol=1e-4, atol=1e-3)
    assert os.environ[unit_split.SWITCH] == "1"


def test_a_candidate_built_as_two_is_judged_and_accepted(build_cache, tmp_path):
    problem = kit.write(tmp_path, "problem.py", PROBLEM)
    candidate = kit.write(tmp_path, "candidate.py", CANDIDATE)
    config = VerifyConfig(device="cuda", cache_dir=build_cache, policy="kernelbench", timing_profile="quick")
    with Verifier(config) as v:
        verdict = v.verify(problem, candidate)
    assert verdict.accepted, verdict.message
    steps = verdict.compile.steps
    if steps:  # none when the extension was already in the build cache
        assert any(":nvcc:units device" in k for k in steps) and not any(":nvcc:lean" in k for k in steps), steps
