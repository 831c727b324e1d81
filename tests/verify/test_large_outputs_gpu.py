"""On a CUDA GPU with room for them (the H200, scripts/gpu/gpu-check): KernelBench-sized problems with 1G-element fp32
outputs (4 GiB each) judged in large-output mode with timing on, honest CUDA candidates accepted (no `bad_problem`),
a wrong one rejected; and the same mode forced on a small problem (threshold 0), through CUDA IPC."""

from __future__ import annotations

import pytest
import torch

from kernelmosaic.verify import Status, Verifier, VerifyConfig
from kernelmosaic.verify.sandbox.kmworker import protocol

from . import kit

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

GIB = 1 << 30

PROBLEM_SMALL_K_MATMUL = '''\
import torch
import torch.nn as nn


class Model(nn.Module):
    """C = A @ B with a short inner dimension: the output dwarfs the inputs."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


rows = 32768
cols = 32768
inner = 64


def get_inputs():
    return [torch.rand(rows, inner), torch.rand(inner, cols)]


def get_init_inputs():
    return []
'''

PROBLEM_SWISH = '''\
import torch
import torch.nn as nn


class Model(nn.Module):
    """x * sigmoid(x), elementwise, over a large activation."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(x)


batch_size = 65536
dim = 16384


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
'''

SMALL_K_MATMUL = r'''
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

matmul_cuda_source = """
#include <torch/extension.h>
#include <cuda_runtime.h>

#define TILE 32

__global__ void tiled_matmul_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                                    int M, int N, int K) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    const int row = blockIdx.y * TILE + threadIdx.y;
    const int col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < K; t += TILE) {
        As[threadIdx.y][threadIdx.x] = (row < M && t + threadIdx.x < K) ? A[(int64_t)row * K + t + threadIdx.x] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = (col < N && t + threadIdx.y < K) ? B[(int64_t)(t + threadIdx.y) * N + col] : 0.0f;
        __syncthreads();
        #pragma unroll
        for (int k = 0; k < TILE; ++k) {
            acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        }
        __syncthreads();
    }
    if (row < M && col < N) {
        C[(int64_t)row * N + col] = acc;
    }
}

torch::Tensor tiled_matmul(torch::Tensor A, torch::Tensor B) {
    TORCH_CHECK(A.is_cuda() && B.is_cuda(), "A and B must be CUDA tensors");
    TORCH_CHECK(A.dim() == 2 && B.dim() == 2 && A.size(1) == B.size(0), "incompatible shapes");
    auto a = A.contiguous();
    auto b = B.contiguous();
    const int M = a.size(0), K = a.size(1), N = b.size(1);
    auto C = torch::empty({M, N}, a.options());
    dim3 block(TILE, TILE);
    dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
    tiled_matmul_kernel<<<grid, block>>>(a.data_ptr<float>(), b.data_ptr<float>(), C.data_ptr<float>(), M, N, K);
    cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "tiled_matmul_kernel failed: ", cudaGetErrorString(err));
    return C;
}
"""

matmul_cpp_source = "torch::Tensor tiled_matmul(torch::Tensor A, torch::Tensor B);"

tiled = load_inline(
    name="km_large_tiled_matmul",
    cpp_sources=matmul_cpp_source,
    cuda_sources=matmul_cuda_source,
    functions=["tiled_matmul"],
    verbose=True,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.matmul = tiled.tiled_matmul

    def forward(self, A, B):
        return self.matmul(A, B)
'''

SWISH = r'''
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

swish_source = """
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void swish_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const float v = x[i];
        y[i] = v / (1.0f + expf(-v));
    }
}

torch::Tensor swish_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const int64_t n = xc.numel();
    const int threads = 256;
    const int blocks = (int)std::min<int64_t>((n + threads - 1) / threads, 65535LL * 8);
    swish_kernel<<<blocks, threads>>>(xc.data_ptr<float>(), y.data_ptr<float>(), n);
    cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "swish_kernel failed: ", cudaGetErrorString(err));
    return y;
}
"""

swish = load_inline(
    name="km_large_swish",
    cpp_sources="torch::Tensor swish_forward(torch::Tensor x);",
    cuda_sources=swish_source,
    functions=["swish_forward"],
    verbose=True,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return swish.swish_forward(x)
'''

WRONG_SWISH = SWISH.replace("y[i] = v / (1.0f + expf(-v));", "y[i] = v / (1.0f + expf(-v)) + (i == n / 3 ? 1.0f : 0.0f);")

GPU_ADD_RELU = '''
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
#include <torch/extension.h>

__global__ void add_relu_kernel(const float* a, const float* b, float* out, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) { float v = a[i] + b[i]; out[i] = v > 0.f ? v : 0.f; }
}

torch::Tensor add_relu(torch::Tensor a, torch::Tensor b) {
    TORCH_CHECK(a.is_cuda() && b.is_cuda(), "CUDA tensors expected");
    auto out = torch::empty_like(a);
    const int64_t n = a.numel();
    add_relu_kernel<<<(n + 255) / 256, 256>>>(a.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(), n);
    return out;
}
"""

ext = load_inline(name="km_large_add_relu", cpp_sources="torch::Tensor add_relu(torch::Tensor a, torch::Tensor b);",
                  cuda_sources=source, functions=["add_relu"], verbose=True)


class ModelNew(nn.Module):
    def forward(self, a, b):
        return ext.add_relu(a, b)
'''


def _config(cache, **kw) -> VerifyConfig:
    base = dict(device="cuda", trials=3, cache_dir=cache, timing_profile="quick", policy="kernelbench")
    return VerifyConfig(**{**base, **kw})


@pytest.fixture(scope="module")
def verifier(build_cache):
    with Verifier(_config(build_cache)) as v:
        yield v


def _needs(bytes_free: int) -> None:
    free, _ = torch.cuda.mem_get_info()
    if free < bytes_free:
        pytest.skip(f"needs {bytes_free / GIB:.0f} GiB free on the GPU, {free / GIB:.0f} GiB are")


@pytest.mark.parametrize("name, problem, candidate", [("small_k_matmul", PROBLEM_SMALL_K_MATMUL, SMALL_K_MATMUL),
                                                      ("swish", PROBLEM_SWISH, SWISH)])
def test_a_1g_element_output_is_judged_and_accepted(verifier, tmp_path, monkeypatch, name, problem, candidate):
    _needs(120 * GIB)  # the float64 oracle's terms (nine 8 GiB draws at once) beside the candidate's tensors
    monkeypatch.setattr(protocol, "MAX_MESSAGE_BYTES", 64 << 20)  # no message of output size, either way
    v = verifier.verify(kit.write(tmp_path, "problem.py", problem), kit.write(tmp_path, f"{name}.py", candidate))
    assert v.status != Status.bad_problem, v.message
    assert v.accepted, v.message
    assert v.correctness.passed == v.correctness.trials == 3
    assert any(f.rule == "large-output-mode" for f in v.findings)
    assert v.timing is not None and v.timing.timed_calls_checked > 0
    assert v.custom is not None and any(k.reaches_output for k in v.custom.kernels)


def test_a_wrong_element_in_a_1g_element_output_is_found(verifier, tmp_path):
    _needs(120 * GIB)
    v = verifier.verify(kit.write(tmp_path, "problem.py", PROBLEM_SWISH), kit.write(tmp_path, "wrong.py", WRONG_SWISH))
    assert v.status == Status.output_mismatch, v.message
    assert "1 of 1073741824 elements outside the error budget" in v.message


def test_small_problem_in_large_output_mode_through_cuda_ipc(build_cache, tmp_path):
    """Threshold 0: every trial's outputs reach the reference worker as CUDA IPC handles."""
    with Verifier(_config(build_cache, large_output_bytes=0, timing=False)) as v:
        verdict = v.verify(kit.write(tmp_path, "problem.py", kit.PROBLEM_ADD_RELU),
                           kit.write(tmp_path, "add_relu.py", GPU_ADD_RELU))
    assert verdict.accepted, verdict.message
    assert any(f.rule == "large-output-mode" for f in verdict.findings)


# One extension for the checks below (one build): the honest kernel and a variant without the ReLU.
PAIR_SOURCE = """
#include <torch/extension.h>

__global__ void add_act_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out,
                               int64_t n, bool relu) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const float v = a[i] + b[i];
        out[i] = (relu && v < 0.f) ? 0.f : v;
    }
}

static torch::Tensor launch(torch::Tensor a, torch::Tensor b, bool relu) {
    TORCH_CHECK(a.is_cuda() && b.is_cuda(), "CUDA tensors expected");
    TORCH_CHECK(a.sizes() == b.sizes(), "a and b must have the same shape");
    auto ac = a.contiguous(), bc = b.contiguous();
    auto out = torch::empty_like(ac);
    const int64_t n = ac.numel();
    const int threads = 256;
    const int blocks = (int)std::min<int64_t>((n + threads - 1) / threads, 4096);
    add_act_kernel<<<blocks, threads>>>(ac.data_ptr<float>(), bc.data_ptr<float>(), out.data_ptr<float>(), n, relu);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}

torch::Tensor add_relu(torch::Tensor a, torch::Tensor b) { return launch(a, b, true); }
torch::Tensor add_plain(torch::Tensor a, torch::Tensor b) { return launch(a, b, false); }
"""


def _pair_candidate(init: str, forward: str) -> str:
    return f'''
import time

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = r"""{PAIR_SOURCE}"""

ops = load_inline(name="km_large_pair", cpp_sources="torch::Tensor add_relu(torch::Tensor a, torch::Tensor b);\\n"
                  "torch::Tensor add_plain(torch::Tensor a, torch::Tensor b);",
                  cuda_sources="#include <c10/cuda/CUDAException.h>\\n" + source,
                  functions=["add_relu", "add_plain"], verbose=True)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.add_relu = ops.add_relu
        self.add_plain = ops.add_plain
{init}
    def forward(self, a, b):
{forward}
'''


PAIR_HONEST = _pair_candidate("", "        return self.add_relu(a, b)")
PAIR_WRONG_WHEN_TIMED = _pair_candidate(
    "        self.calls = 0\n",
    "        self.calls += 1\n        if self.calls > 7:  # past the trials and the refill\n"
    "            return self.add_plain(a, b)\n        return self.add_relu(a, b)")
# Stale whenever calls come back to back, with a threshold above the gap between burst calls (the worker picks each
# call's inputs and projects its output between them): at 20 us it never answered stale here (H100, 2026-12-05).
PAIR_STALE_IN_BURST = _pair_candidate(
    "        self.last = None\n        self.returned = 0.0\n",
    "        gap = time.perf_counter() - self.returned\n        out = self.add_relu(a, b)\n"
    "        previous, self.last = self.last, out\n        self.returned = time.perf_counter()\n"
    "        return previous if previous is not None and gap < 3e-4 else out")
PAIR_DECOY = _pair_candidate("", "        self.add_relu(a, b)\n        return torch.relu(a + b)")

SMALL_N = 1 << 20  # 4 MiB per output


@pytest.fixture(scope="module")
def small_large(build_cache):
    """Threshold 0 with timing on: every path of large-output mode on a small problem, through CUDA IPC. Static
    analysis off: each runtime check is shown to hold on its own."""
    with Verifier(_config(build_cache, large_output_bytes=0, compile_baseline=False, derive_alt=False,
                          static_checks=False)) as v:
        yield v


@pytest.mark.parametrize("name, source, status, rules", [
    ("honest", PAIR_HONEST, Status.accepted, {"large-output-mode"}),
    ("wrong_when_timed", PAIR_WRONG_WHEN_TIMED, Status.output_mismatch, {"timed-output-check"}),
    # a host-inclusive timed call can come within 20 µs of the last on a GPU: its fingerprint may see it first
    ("stale_in_burst", PAIR_STALE_IN_BURST, Status.output_mismatch,
     {"burst-output-fingerprint", "timed-output-fingerprint", "timed-output-check"}),
    ("decoy", PAIR_DECOY, Status.output_mismatch, {"kernel-output-unused"}),
])
def test_large_mode_checks_catch_on_cuda_with_no_message_of_output_size(small_large, tmp_path, monkeypatch, name,
                                                                        source, status, rules):
    monkeypatch.setattr(protocol, "MAX_MESSAGE_BYTES", 2 * SMALL_N)  # half an output
    problem = kit.write(tmp_path, "problem.py", kit.PROBLEM_ADD_RELU.replace("n = 4096", f"n = {SMALL_N}"))
    v = small_large.verify(problem, kit.write(tmp_path, f"{name}.py", source))
    assert v.status == status, v.message
    assert rules & {f.rule for f in v.findings}, v.findings
    if status == Status.accepted:
        assert v.custom is not None and [k.reaches_output for k in v.custom.kernels] == [True]
