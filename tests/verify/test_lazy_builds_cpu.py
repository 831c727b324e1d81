"""An extension built after the import, the way lazy loaders are written: `load_inline` imported and called inside a
function that `__init__` (or the first forward) calls. The compile stage builds only what the import asks for, so
this build runs in the candidate's worker; blind round 14 (2026-12-06) had two honest answers of this shape rejected
under both policies: the real `load_inline` wrote to ~/.cache (outside what the worker may write), and once it could
build, the probes saw no call into an extension they had not been handed."""

from __future__ import annotations

import pytest

from kernelmosaic.verify import Verifier, VerifyConfig

from . import kit

pytestmark = pytest.mark.slow

LAZY = '''\
import torch
import torch.nn as nn

_SRC = r"""
#include <torch/extension.h>

torch::Tensor add_relu(torch::Tensor a, torch::Tensor b) {
    auto ac = a.contiguous(), bc = b.contiguous();
    auto out = torch::empty_like(ac);
    const float* pa = ac.data_ptr<float>();
    const float* pb = bc.data_ptr<float>();
    float* po = out.data_ptr<float>();
    at::parallel_for(0, ac.numel(), 2048, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) { float v = pa[i] + pb[i]; po[i] = v > 0.f ? v : 0.f; }
    });
    return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("add_relu", &add_relu, "fused add + relu"); }
"""

_ext = None


def _kernels():
    global _ext
    if _ext is None:
        from torch.utils.cpp_extension import load_inline  # bound here, after the candidate's import

        _ext = load_inline(name="km_lazy_in_init_add_relu", cpp_sources=_SRC, extra_cflags=["-O2"], verbose=False)
    return _ext


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        _kernels()  # built on construction

    def forward(self, a, b):
        return _kernels().add_relu(a, b)
'''


@pytest.mark.parametrize("policy", ["strict", "kernelbench"])
def test_an_extension_built_in_init_by_a_lazy_loader_is_judged(build_cache, tmp_path, policy):
    config = VerifyConfig(device="cpu", trials=2, cache_dir=build_cache, timing=False, compile_baseline=False)
    with Verifier(config) as verifier:
        v = verifier.verify(kit.write(tmp_path, "p.py", kit.PROBLEM_ADD_RELU), kit.write(tmp_path, "c.py", LAZY),
                            policy=policy)
    assert v.accepted, f"{v.status}: {v.message}"
    assert v.custom is not None and any(k.reaches_output for k in v.custom.kernels), v.custom
