"""PyTorch compute in a branch chosen by the inputs' metadata (`if x.dim() != 4: return F.instance_norm(x)`) is a
fallback the run decides on (`static/guards.py`): statically a `torch-compute-guarded` flag under `strict`, then the
run-time operator probe rejects it where the problem's inputs take it. A branch chosen by values or by state
forward's own calls change is no such guard. Blind round 13 (2026-12-06) wrote the first shape as a model would, and
`strict` rejected it statically although no PyTorch operator ran."""

from __future__ import annotations

import pytest

from kernelmosaic.verify import Status, Verifier, VerifyConfig
from kernelmosaic.verify.static import analyze_candidate

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

CANDIDATE = '''import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

_SRC = r"""
#include <torch/extension.h>
torch::Tensor relu_fwd(torch::Tensor x) {
    TORCH_CHECK(x.is_contiguous() && x.scalar_type() == torch::kFloat, "relu_fwd: contiguous float32 only");
    auto y = torch::empty_like(x);
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    at::parallel_for(0, x.numel(), 4096, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) out[i] = in[i] > 0.f ? in[i] : 0.f;
    });
    return y;
}
"""

_ext = load_inline(name="guarded_relu_cpu", cpp_sources=_SRC, functions=["relu_fwd"], verbose=False,
                   extra_cflags=["-O2"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.max_rank = 4

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dtype != torch.float32 or not x.is_contiguous() or x.dim() > self.max_rank:
            warnings.warn(f"unsupported input {tuple(x.shape)} {x.dtype}: falling back to torch.relu")
            return F.relu(x)
        return _ext.relu_fwd(x)
'''

# the same guard with the fallback taken at the problem's own sizes: PyTorch does the work
TAKEN = CANDIDATE.replace("x.dim() > self.max_rank", "x.dim() == 2")
# a branch chosen by the inputs' values, and one chosen by a counter forward keeps: no guard of either kind
BY_VALUE = CANDIDATE.replace("x.dim() > self.max_rank", "bool(x.sum() > 1e9)")
# where an input lies differs between calls of one shape (the burst's windows): PyTorch in some calls only
BY_OFFSET = CANDIDATE.replace("x.dim() > self.max_rank", "x.storage_offset() > 0")
BY_STATE = CANDIDATE.replace("        return _ext.relu_fwd(x)", "        self.calls = getattr(self, 'calls', 0) + 1\n"
                             "        return _ext.relu_fwd(x)").replace("x.dim() > self.max_rank", "self.calls > 3")


def _rules(source: str, policy: str) -> dict[str, str]:
    found = analyze_candidate(source, "candidate.py", VerifyConfig(device="cpu", policy=policy).static_policy())
    return {f.rule: f.severity for f in found}


def test_a_metadata_guard_is_a_flag_and_values_or_state_are_not_guards():
    assert _rules(CANDIDATE, "strict").get("torch-compute-guarded") == "flag"
    assert "torch-compute" not in _rules(CANDIDATE, "strict")
    assert _rules(BY_VALUE, "strict").get("torch-compute") == "reject"
    assert _rules(BY_STATE, "strict").get("torch-compute") == "reject"
    assert _rules(BY_OFFSET, "strict").get("torch-compute") == "reject"


@pytest.mark.slow
def test_the_run_decides_whether_the_fallback_is_taken(tmp_path):
    problem = tmp_path / "problem.py"
    problem.write_text(PROBLEM)
    honest, taken = tmp_path / "honest.py", tmp_path / "taken.py"
    honest.write_text(CANDIDATE)
    taken.write_text(TAKEN)
    config = VerifyConfig(device="cpu", trials=2, timing=False, run_timeout_s=120)
    with Verifier(config) as verifier:
        ok = verifier.verify(problem, honest, policy="strict")
        assert ok.accepted, ok.message
        assert "torch-compute-guarded" in {f.rule for f in ok.findings if f.severity == "flag"}
        bad = verifier.verify(problem, taken, policy="strict")
    assert not bad.accepted and bad.status == Status.no_custom_kernel, bad.message
    assert "relu" in bad.message, bad.message  # the operator it saw, by name
