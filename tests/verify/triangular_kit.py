"""Triangular matrix products, KernelBench-style (L1's upper- and lower-triangular matmul at N = 4096), and
candidates that read only the triangles the problem's inputs fill: C++ for the CPU, CUDA for the GPU.

`get_inputs` makes triangular A and B, and `forward` returns the triangle of A @ B; a kernel that skips the zero
halves is correct for the problem. The CPU tests shrink N with the project's shape overrides.
"""

from __future__ import annotations

__all__ = ["problem", "CPU_CANDIDATES", "cuda_candidate"]


def problem(part: str) -> str:
    """The problem for `part` ("triu" or "tril"): A and B of that shape, C = part(A @ B)."""
    return f'''\
import torch
import torch.nn as nn


class Model(nn.Module):
    """C = {part}(A @ B) for {"upper" if part == "triu" else "lower"} triangular square matrices A and B."""

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A, B):
        return torch.{part}(torch.matmul(A, B))


N = 4096


def get_inputs():
    A = torch.{part}(torch.randn(N, N))
    B = torch.{part}(torch.randn(N, N))
    return [A, B]


def get_init_inputs():
    return []
'''


_CPP = r'''
#include <torch/extension.h>
#include <vector>

#define CHECK_INPUT(x) TORCH_CHECK(x.dim() == 2 && x.is_contiguous() && x.scalar_type() == torch::kFloat32, \
                                   #x " must be a contiguous 2-D float32 tensor")

// C[i][j] = sum over k in [i, j] of A[i][k] * B[k][j] for j >= i: every other term has a zero factor.
torch::Tensor upper_tri_matmul(torch::Tensor A, torch::Tensor B) {
    CHECK_INPUT(A); CHECK_INPUT(B);
    const int64_t n = A.size(0);
    TORCH_CHECK(A.size(1) == n && B.size(0) == n && B.size(1) == n, "square matrices of one size expected");
    auto C = torch::zeros({n, n}, A.options());
    const float* a = A.data_ptr<float>();
    const float* b = B.data_ptr<float>();
    float* c = C.data_ptr<float>();
    at::parallel_for(0, n, 8, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) {
            for (int64_t k = i; k < n; ++k) {
                const float aik = a[i * n + k];
                for (int64_t j = k; j < n; ++j) c[i * n + j] += aik * b[k * n + j];
            }
        }
    });
    return C;
}

// C[i][j] = sum over k in [j, i] of A[i][k] * B[k][j] for j <= i.
torch::Tensor lower_tri_matmul(torch::Tensor A, torch::Tensor B) {
    CHECK_INPUT(A); CHECK_INPUT(B);
    const int64_t n = A.size(0);
    TORCH_CHECK(A.size(1) == n && B.size(0) == n && B.size(1) == n, "square matrices of one size expected");
    auto C = torch::zeros({n, n}, A.options());
    const float* a = A.data_ptr<float>();
    const float* b = B.data_ptr<float>();
    float* c = C.data_ptr<float>();
    at::parallel_for(0, n, 8, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) {
            for (int64_t k = 0; k <= i; ++k) {
                const float aik = a[i * n + k];
                for (int64_t j = 0; j <= k; ++j) c[i * n + j] += aik * b[k * n + j];
            }
        }
    });
    return C;
}

// Wrong: the k = i term is left out, so every element misses A[i][i] * B[i][j].
torch::Tensor upper_tri_matmul_skips_diagonal(torch::Tensor A, torch::Tensor B) {
    CHECK_INPUT(A); CHECK_INPUT(B);
    const int64_t n = A.size(0);
    auto C = torch::zeros({n, n}, A.options());
    const float* a = A.data_ptr<float>();
    const float* b = B.data_ptr<float>();
    float* c = C.data_ptr<float>();
    for (int64_t i = 0; i < n; ++i)
        for (int64_t k = i + 1; k < n; ++k)
            for (int64_t j = k; j < n; ++j) c[i * n + j] += a[i * n + k] * b[k * n + j];
    return C;
}

// Wrong for this problem: it reads only the lower triangles, as if the inputs were lower triangular.
torch::Tensor upper_tri_matmul_wrong_half(torch::Tensor A, torch::Tensor B) {
    return lower_tri_matmul(A, B);
}
'''

_FUNCTIONS = ["upper_tri_matmul", "lower_tri_matmul", "upper_tri_matmul_skips_diagonal", "upper_tri_matmul_wrong_half"]


def _cpu_candidate(function: str) -> str:
    return f'''\
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

tri_cpp_source = r"""{_CPP}"""

tri_matmul = load_inline(
    name="km_tri_matmul",
    cpp_sources=tri_cpp_source,
    functions={_FUNCTIONS!r},
    extra_cflags=["-O3"],
    verbose=True,
)


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()
        self.tri_matmul = tri_matmul

    def forward(self, A, B):
        return self.tri_matmul.{function}(A.contiguous(), B.contiguous())
'''


CPU_CANDIDATES = {
    "triu": _cpu_candidate("upper_tri_matmul"),
    "tril": _cpu_candidate("lower_tri_matmul"),
    "triu_skips_diagonal": _cpu_candidate("upper_tri_matmul_skips_diagonal"),
    "triu_reads_wrong_half": _cpu_candidate("upper_tri_matmul_wrong_half"),
}
"""An honest kernel for each problem, and two wrong ones for the upper-triangular problem."""


_CUDA = r'''
#include <torch/extension.h>
#include <cuda_runtime.h>

#define TILE 32

// One thread per C[row][col] with col >= row; tiles wholly below the diagonal return at once, and the k loop runs
// only over [row, col], the terms where neither factor is in a zero half.
__global__ void triu_matmul_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int N) {
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    if (row >= N || col >= N) return;
    if (col < row) { C[row * N + col] = 0.0f; return; }
    float acc = 0.0f;
    for (int k = row; k <= col; ++k) acc += A[row * N + k] * B[k * N + col];
    C[row * N + col] = acc;
}

torch::Tensor triu_matmul_cuda(torch::Tensor A, torch::Tensor B) {
    TORCH_CHECK(A.is_cuda() && B.is_cuda(), "CUDA tensors expected");
    TORCH_CHECK(A.is_contiguous() && B.is_contiguous(), "contiguous tensors expected");
    int N = A.size(0);
    auto C = torch::empty({N, N}, A.options());
    dim3 block(TILE, TILE);
    dim3 grid((N + TILE - 1) / TILE, (N + TILE - 1) / TILE);
    triu_matmul_kernel<<<grid, block>>>(A.data_ptr<float>(), B.data_ptr<float>(), C.data_ptr<float>(), N);
    cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "triu_matmul_kernel launch failed: ", cudaGetErrorString(err));
    return C;
}
'''


def cuda_candidate() -> str:
    """A CUDA candidate for the upper-triangular problem that skips the zero halves (for the GPU check)."""
    return f'''\
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""{_CUDA}"""
cpp_source = "torch::Tensor triu_matmul_cuda(torch::Tensor A, torch::Tensor B);"

triu_matmul = load_inline(
    name="km_triu_matmul_cuda",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["triu_matmul_cuda"],
    verbose=True,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.triu_matmul = triu_matmul

    def forward(self, A, B):
        return self.triu_matmul.triu_matmul_cuda(A.contiguous(), B.contiguous())
'''
