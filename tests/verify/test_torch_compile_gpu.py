"""On a CUDA GPU: `torch.compile` inside `ModelNew` is PyTorch compute. Inductor's generated Triton kernels are library
kernels in the census (by provenance and by name), so they never count in the custom share, and a candidate whose
only kernels are Inductor's has no custom kernel (the bare `triton_` name of `unique_kernel_names=False` and a name
no marker knows are covered by test_torch_compile_cpu.py's provenance test)."""

from __future__ import annotations

import pytest
import torch

from kernelmosaic.verify import Status, Verifier, VerifyConfig

from . import kit

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

PROBLEM = """\
import torch
import torch.nn as nn

batch_size = 128
features = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        y = torch.relu(x)
        return torch.tanh(y * 2.0) + y.sum(dim=1, keepdim=True)


def get_inputs():
    return [torch.randn(batch_size, features)]


def get_init_inputs():
    return []
"""

RELU_CUDA = r"""
#include <torch/extension.h>

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}

torch::Tensor relu_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "relu_cuda: float32 CUDA tensor expected");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    int64_t n = xc.numel();
    relu_kernel<<<(n + 255) / 256, 256>>>(xc.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""

HYBRID = f'''\
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_ext = load_inline(name="tc_relu_ext", cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);",
                       cuda_sources=r"""{RELU_CUDA}""", functions=["relu_cuda"], verbose=True)


@torch.compile(fullgraph=True)
def epilogue(y):
    return torch.tanh(y * 2.0) + y.sum(dim=1, keepdim=True)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.relu = relu_ext.relu_cuda

    def forward(self, x):
        return epilogue(self.relu(x))
'''

ONLY_COMPILED = '''\
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.fn = torch.compile(self._fn, fullgraph=True)

    def _fn(self, x):
        y = torch.relu(x)
        return torch.tanh(y * 2.0) + y.sum(dim=1, keepdim=True)

    def forward(self, x):
        return self.fn(x)
'''


@pytest.fixture(scope="module")
def verifier(build_cache):
    config = VerifyConfig(device="cuda", trials=3, cache_dir=build_cache, timing=False, policy="kernelbench",
                          run_timeout_s=600)
    with Verifier(config) as v:
        yield v


def test_compiled_epilogue_counts_as_pytorch_in_the_share(verifier, tmp_path):
    problem = kit.write(tmp_path, "problem.py", PROBLEM)
    v = verifier.verify(problem, kit.write(tmp_path, "hybrid.py", HYBRID))
    print(f"hybrid: {v.message}; census {[(k.name[:60], k.custom) for k in v.census.kernels]}")
    assert v.accepted, v.message
    custom = [k.name for k in v.census.kernels if k.custom]
    assert custom and all("relu_kernel" in name for name in custom), v.census
    assert v.census.compiled_by_torch and not any(k.custom for k in v.census.kernels
                                                  if k.name in v.census.compiled_by_torch)
    assert v.custom.share is not None and v.custom.share < 1.0


@pytest.mark.parametrize("policy", ["kernelbench", "strict"])
def test_inductor_kernels_alone_are_no_custom_kernel(verifier, tmp_path, policy):
    problem = kit.write(tmp_path, "problem.py", PROBLEM)
    v = verifier.verify(problem, kit.write(tmp_path, "only.py", ONLY_COMPILED), policy=policy)
    assert v.status == Status.no_custom_kernel, v.message
