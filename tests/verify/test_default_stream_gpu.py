"""On a CUDA GPU (scripts/gpu/gpu-check), issue 35 item 5: a kernel launched on the legacy default stream (a bare
`kernel<<<grid, block>>>`, as most model-written kernels are) or on the per-thread default stream is inside the
timed window and never reported as escaped work; a kernel left running on a non-blocking side stream still is."""

from __future__ import annotations

import pytest
import torch

from kernelmosaic.verify import Status, Verifier, VerifyConfig
from kernelmosaic.verify.judgement import ESCAPED_FLOOR_MS

from . import gpu_kit as gk
from . import kit

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

CUDA_SRC = r'''
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void bias_relu_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out,
                                 int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) {
        float v = a[i] + b[i];
        out[i] = v > 0.f ? v : 0.f;
    }
}

__global__ void add_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}

__global__ void relu_inplace_kernel(float* __restrict__ x, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) x[i] = fmaxf(x[i], 0.f);
}

__global__ void busy_kernel(unsigned long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}

torch::Tensor add_relu_legacy(torch::Tensor a, torch::Tensor b) {
    TORCH_CHECK(a.is_cuda() && b.is_cuda(), "inputs must be CUDA tensors");
    TORCH_CHECK(a.numel() == b.numel(), "inputs must have the same size");
    auto out = torch::empty_like(a);
    const int64_t n = a.numel();
    const int threads = 256;
    const int blocks = (int)((n + threads - 1) / threads);
    // two launches, an op and its in-place epilogue, both with no stream argument
    add_kernel<<<blocks, threads>>>(a.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(), n);
    relu_inplace_kernel<<<blocks, threads>>>(out.data_ptr<float>(), n);
    cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "kernel launch failed: ", cudaGetErrorString(err));
    return out;
}

torch::Tensor add_relu_per_thread(torch::Tensor a, torch::Tensor b) {
    auto out = torch::empty_like(a);
    const int64_t n = a.numel();
    bias_relu_kernel<<<(int)((n + 255) / 256), 256, 0, cudaStreamPerThread>>>(a.data_ptr<float>(), b.data_ptr<float>(),
                                                                           out.data_ptr<float>(), n);
    return out;
}

torch::Tensor add_relu_then_side_work(torch::Tensor a, torch::Tensor b) {
    static cudaStream_t side = nullptr;
    if (!side) cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
    auto out = add_relu_legacy(a, b);
    busy_kernel<<<1, 1, 0, side>>>(8000000ULL);  // 8 ms nobody waits for
    return out;
}
'''

CPP_SRC = '''
torch::Tensor add_relu_legacy(torch::Tensor a, torch::Tensor b);
torch::Tensor add_relu_per_thread(torch::Tensor a, torch::Tensor b);
torch::Tensor add_relu_then_side_work(torch::Tensor a, torch::Tensor b);
'''


def _candidate(entry: str) -> str:
    return f'''\
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""{CUDA_SRC}"""
cpp_source = r"""{CPP_SRC}"""

fused = load_inline(name="km_default_stream_ext", cpp_sources=cpp_source, cuda_sources=cuda_source,
                    functions=["add_relu_legacy", "add_relu_per_thread", "add_relu_then_side_work"], verbose=True,
                    extra_cuda_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.op = fused.{entry}

    def forward(self, a, b):
        return self.op(a.contiguous(), b.contiguous())
'''


@pytest.fixture(scope="module")
def verifier(build_cache):
    config = VerifyConfig(device="cuda", trials=3, cache_dir=build_cache, timing_budget_ms=100, timing_rounds=2,
                          static_checks=False, compile_baseline=False)
    with Verifier(config) as v:
        yield v


@pytest.fixture(scope="module")
def problem(tmp_path_factory):
    return kit.write(tmp_path_factory.mktemp("default-stream"), "add.py", gk.PROBLEM_ADD_RELU)


@pytest.mark.parametrize("entry", ["add_relu_legacy", "add_relu_per_thread"])
def test_a_default_stream_launch_is_inside_the_window(verifier, problem, tmp_path, entry):
    v = verifier.verify(problem, kit.write(tmp_path, f"{entry}.py", _candidate(entry)))
    assert v.accepted, f"{v.status}: {v.message}"
    assert "timing-escaped-work" not in {f.rule for f in v.findings}
    assert 0 <= v.timing.escaped_ms < ESCAPED_FLOOR_MS


def test_work_left_on_a_non_blocking_stream_still_escapes(verifier, problem, tmp_path):
    v = verifier.verify(problem, kit.write(tmp_path, "side.py", _candidate("add_relu_then_side_work")))
    assert v.status == Status.timing_anomaly, v.message
    assert {f.rule for f in v.findings} & {"timing-escaped-work", "timing-wall-clock"}, v.findings
