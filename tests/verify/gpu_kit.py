"""CUDA problems and candidates for the GPU tests and fixtures (run on the H200 by scripts/gpu/gpu-check)."""

from __future__ import annotations

PROBLEM_ADD_RELU = '''\
import torch
import torch.nn as nn

n = 1 << 24


class Model(nn.Module):
    def forward(self, a, b):
        return torch.relu(a + b)


def get_inputs():
    return [torch.randn(n), torch.randn(n)]


def get_init_inputs():
    return []
'''

# An odd size: the caching allocator's slack after the input makes a one-past-the-end read harmless in a plain run.
PROBLEM_ADD_RELU_ODD = PROBLEM_ADD_RELU.replace("n = 1 << 24", "n = 1_000_003")

PROBLEM_MATMUL = '''\
import torch
import torch.nn as nn

m = 2048


class Model(nn.Module):
    def forward(self, a, b):
        return a @ b


def get_inputs():
    return [torch.randn(m, m), torch.randn(m, m)]


def get_init_inputs():
    return []
'''

_HEAD = r'''
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime.h>
'''

ADD_RELU_KERNELS = _HEAD + r'''
__global__ void add_relu_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out, int64_t n) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        float v = a[i] + b[i];
        out[i] = v > 0.f ? v : 0.f;
    }
}

__global__ void half_kernel(const float* a, const float* b, float* out, int64_t n) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n / 2; i += (int64_t)gridDim.x * blockDim.x) {
        float v = a[i] + b[i];
        out[i] = v > 0.f ? v : 0.f;
    }
}

__global__ void oob_kernel(const float* a, const float* b, float* out, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) out[i + (int64_t)1 << 40] = a[i] + b[i];
}

__global__ void overread_kernel(const float* a, const float* b, float* out, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) {
        float v = a[i] + b[i];
        (void)*(volatile const float*)(a + i + 1);  // the last thread reads one past the end; the result never uses it
        out[i] = v > 0.f ? v : 0.f;
    }
}

static int blocks_for(int64_t n) { return (int)std::min<int64_t>((n + 255) / 256, 132 * 32); }

torch::Tensor add_relu(torch::Tensor a, torch::Tensor b) {
    auto out = torch::empty_like(a);
    int64_t n = a.numel();
    add_relu_kernel<<<blocks_for(n), 256, 0, at::cuda::getCurrentCUDAStream()>>>(a.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(), n);
    return out;
}

torch::Tensor half_written(torch::Tensor a, torch::Tensor b) {
    auto out = torch::empty_like(a);
    int64_t n = a.numel();
    half_kernel<<<blocks_for(n), 256, 0, at::cuda::getCurrentCUDAStream()>>>(a.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(), n);
    return out;
}

torch::Tensor add_relu_overread(torch::Tensor a, torch::Tensor b) {
    auto out = torch::empty_like(a);
    int64_t n = a.numel();
    overread_kernel<<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(a.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(), n);
    return out;
}

__global__ void spin_forever_kernel(volatile const int* flag) {
    while (*flag == 0) {}  // the flag is zero and nobody writes it: the kernel never ends
}

torch::Tensor hang(torch::Tensor a, torch::Tensor b) {
    auto flag = torch::zeros({1}, a.options().dtype(torch::kInt32));
    spin_forever_kernel<<<1, 1, 0, at::cuda::getCurrentCUDAStream()>>>(flag.data_ptr<int>());
    return torch::empty_like(a);  // never reached in time; no ATen arithmetic, so the static checks pass the source
}

torch::Tensor out_of_bounds(torch::Tensor a, torch::Tensor b) {
    auto out = torch::empty_like(a);
    int64_t n = a.numel();
    oob_kernel<<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(a.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(), n);
    return out;
}
'''

DEAD_KERNEL = _HEAD + r'''
__global__ void never_launched(const float* a, const float* b, float* out, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = fmaxf(a[i] + b[i], 0.f);
}

torch::Tensor dead_kernel_aten(torch::Tensor a, torch::Tensor b) {
    return at::relu(a + b);  // the kernel above is never launched
}
'''

ADD_RELU_DECL = r'''
torch::Tensor add_relu(torch::Tensor a, torch::Tensor b);
torch::Tensor half_written(torch::Tensor a, torch::Tensor b);
torch::Tensor out_of_bounds(torch::Tensor a, torch::Tensor b);
torch::Tensor add_relu_overread(torch::Tensor a, torch::Tensor b);
torch::Tensor hang(torch::Tensor a, torch::Tensor b);
'''

MATMUL_KERNELS = _HEAD + r'''
#define TILE 32
__global__ void tiled_matmul(const float* A, const float* B, float* C, int n) {
    __shared__ float As[TILE][TILE + 1];
    __shared__ float Bs[TILE][TILE + 1];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.f;
    for (int t = 0; t < n; t += TILE) {
        As[threadIdx.y][threadIdx.x] = (row < n && t + threadIdx.x < n) ? A[row * n + t + threadIdx.x] : 0.f;
        Bs[threadIdx.y][threadIdx.x] = (col < n && t + threadIdx.y < n) ? B[(t + threadIdx.y) * n + col] : 0.f;
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < n && col < n) C[row * n + col] = acc;
}

__global__ void racy_matmul(const float* A, const float* B, float* C, int n) {
    __shared__ float As[TILE][TILE + 1];
    __shared__ float Bs[TILE][TILE + 1];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.f;
    for (int t = 0; t < n; t += TILE) {
        As[threadIdx.y][threadIdx.x] = A[row * n + t + threadIdx.x];
        Bs[threadIdx.y][threadIdx.x] = B[(t + threadIdx.y) * n + col];
        for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];  // no barriers: a race
    }
    C[row * n + col] = acc;
}

torch::Tensor matmul(torch::Tensor a, torch::Tensor b) {
    int n = a.size(0);
    auto c = torch::empty_like(a);
    dim3 block(TILE, TILE), grid((n + TILE - 1) / TILE, (n + TILE - 1) / TILE);
    tiled_matmul<<<grid, block, 0, at::cuda::getCurrentCUDAStream()>>>(a.data_ptr<float>(), b.data_ptr<float>(), c.data_ptr<float>(), n);
    return c;
}

torch::Tensor matmul_racy(torch::Tensor a, torch::Tensor b) {
    int n = a.size(0);
    auto c = torch::empty_like(a);
    dim3 block(TILE, TILE), grid(n / TILE, n / TILE);
    racy_matmul<<<grid, block, 0, at::cuda::getCurrentCUDAStream()>>>(a.data_ptr<float>(), b.data_ptr<float>(), c.data_ptr<float>(), n);
    return c;
}

'''

MATMUL_DECL = r'''
torch::Tensor matmul(torch::Tensor a, torch::Tensor b);
torch::Tensor matmul_racy(torch::Tensor a, torch::Tensor b);
'''

# Each cheat lives in its own extension: the static checker judges a whole extension, so a cheat must not
# share a source with the legitimate kernels.
MATMUL_SIDE = MATMUL_KERNELS + r'''
torch::Tensor matmul_side_stream(torch::Tensor a, torch::Tensor b) {
    static cudaStream_t side = nullptr;
    if (!side) cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
    int n = a.size(0);
    auto c = torch::empty_like(a);
    dim3 block(TILE, TILE), grid((n + TILE - 1) / TILE, (n + TILE - 1) / TILE);
    tiled_matmul<<<grid, block, 0, side>>>(a.data_ptr<float>(), b.data_ptr<float>(), c.data_ptr<float>(), n);
    return c;  // returned before the side stream finished: the default-stream timer never sees the work
}

__global__ void spin_kernel(unsigned long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}

torch::Tensor matmul_trailing_side_work(torch::Tensor a, torch::Tensor b) {
    static cudaStream_t side = nullptr;
    if (!side) cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
    auto c = ::matmul(a, b);  // the answer is computed on the current stream, correctly
    spin_kernel<<<1, 1, 0, side>>>(8000000ULL);  // 8 ms of work the current stream never waits for
    return c;
}

'''

MATMUL_L2 = MATMUL_KERNELS + r'''
torch::Tensor matmul_pinned_l2(torch::Tensor a, torch::Tensor b) {
    cudaStreamAttrValue attr = {};
    attr.accessPolicyWindow.base_ptr = a.data_ptr();
    attr.accessPolicyWindow.num_bytes = std::min<size_t>(a.numel() * 4, 32 << 20);
    attr.accessPolicyWindow.hitRatio = 1.0f;
    attr.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
    attr.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    cudaStreamSetAttribute(at::cuda::getCurrentCUDAStream(), cudaStreamAttributeAccessPolicyWindow, &attr);
    return ::matmul(a, b);
}
'''



def cuda_candidate(forward: str, *, kernels: str = ADD_RELU_KERNELS, decl: str = ADD_RELU_DECL, name: str = "km_gpu_add",
                   functions: list[str] | None = None, prelude: str = "") -> str:
    funcs = functions or [ln.split("(")[0].split()[-1] for ln in decl.strip().splitlines()]
    return f'''\
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline
{prelude}
CUDA_SRC = r"""{kernels}"""
CPP_SRC = r"""{decl}"""

ext = load_inline(name="{name}", cpp_sources=CPP_SRC, cuda_sources=CUDA_SRC, functions={funcs!r},
                  extra_cuda_cflags=["-O3"])


class ModelNew(nn.Module):
    def forward(self, a, b):
        return {forward}
'''


MATMUL_SIDE_DECL = r'''
torch::Tensor matmul(torch::Tensor a, torch::Tensor b);
torch::Tensor matmul_racy(torch::Tensor a, torch::Tensor b);
torch::Tensor matmul_side_stream(torch::Tensor a, torch::Tensor b);
torch::Tensor matmul_trailing_side_work(torch::Tensor a, torch::Tensor b);
'''


def matmul_candidate(forward: str, prelude: str = "") -> str:
    """`forward` names one of matmul, matmul_racy, matmul_side_stream, matmul_trailing_side_work, matmul_pinned_l2."""
    if "side_stream" in forward or "trailing_side_work" in forward:
        return cuda_candidate(forward, kernels=MATMUL_SIDE, decl=MATMUL_SIDE_DECL, name="km_gpu_mm_side", prelude=prelude)
    if "pinned_l2" in forward:
        return cuda_candidate(forward, kernels=MATMUL_L2, decl="torch::Tensor matmul_pinned_l2(torch::Tensor a, torch::Tensor b);",
                              name="km_gpu_mm_l2", prelude=prelude)
    return cuda_candidate(forward, kernels=MATMUL_KERNELS, decl=MATMUL_DECL, name="km_gpu_mm", prelude=prelude)


def dead_kernel_candidate() -> str:
    return cuda_candidate("ext.dead_kernel_aten(a, b)", kernels=DEAD_KERNEL,
                          decl="torch::Tensor dead_kernel_aten(torch::Tensor a, torch::Tensor b);", name="km_gpu_dead")


TRITON_ADD_RELU = '''\
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_relu_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.maximum(a + b, 0.0), mask=mask)


class ModelNew(nn.Module):
    def forward(self, a, b):
        out = torch.empty_like(a)
        n = a.numel()
        add_relu_kernel[(triton.cdiv(n, 1024),)](a, b, out, n, BLOCK=1024)
        return out
'''


PROBLEM_ROWSUM = """\
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a):
        return a.sum(dim=1)


def get_inputs():
    return [torch.randn(2048, 1024)]


def get_init_inputs():
    return []
"""

ROWSUM_KERNELS = _HEAD + r"""
// One block of 256 threads per row; a shared-memory tree over the per-thread partial sums.
template <bool BARRIER>
__global__ void rowsum_tree(const float* __restrict__ a, float* __restrict__ out, int cols) {
    __shared__ float part[256];
    const float* row = a + (long)blockIdx.x * cols;
    float s = 0.f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) s += row[j];
    part[threadIdx.x] = s;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half >>= 1) {
        if (threadIdx.x < half) part[threadIdx.x] += part[threadIdx.x + half];
        if (BARRIER) __syncthreads();  // without it, warps read partial sums other warps have not written yet
    }
    if (threadIdx.x == 0) out[blockIdx.x] = part[0];
}

torch::Tensor rowsum(torch::Tensor a) {
    auto out = torch::empty({a.size(0)}, a.options());
    rowsum_tree<true><<<a.size(0), 256, 0, at::cuda::getCurrentCUDAStream()>>>(a.data_ptr<float>(), out.data_ptr<float>(), a.size(1));
    return out;
}

torch::Tensor rowsum_no_barrier(torch::Tensor a) {
    auto out = torch::empty({a.size(0)}, a.options());
    rowsum_tree<false><<<a.size(0), 256, 0, at::cuda::getCurrentCUDAStream()>>>(a.data_ptr<float>(), out.data_ptr<float>(), a.size(1));
    return out;
}
"""


def rowsum_candidate(function: str) -> str:
    """`function`: rowsum (a barrier after each tree step) or rowsum_no_barrier (the barrier missing)."""
    decl = "torch::Tensor rowsum(torch::Tensor a);\ntorch::Tensor rowsum_no_barrier(torch::Tensor a);\n"
    return cuda_candidate(f"ext.{function}(a)", kernels=ROWSUM_KERNELS, decl=decl, name="km_gpu_rowsum_tree") \
        .replace("def forward(self, a, b):", "def forward(self, a):")
