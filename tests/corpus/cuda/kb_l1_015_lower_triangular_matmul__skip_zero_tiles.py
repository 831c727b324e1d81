# corpus: problem=kb_l1_015_lower_triangular_matmul device=cuda expect=accepted policy=both
# style: lower-triangular tiled matmul reading only the k-tiles between j and i
# class: 5
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

tri_cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime.h>

constexpr int TS = 32;

// For triangular A and B (the problem's inputs), C = tri(A @ B) needs only the k-tiles between the row tile and
// the column tile: for upper, k runs from i to j; for lower, from j to i. Tiles on the zero side are never read.
template <bool UPPER>
__global__ void tri_matmul_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int n) {
    __shared__ float As[TS][TS];
    __shared__ float Bs[TS][TS];
    const int by = blockIdx.y, bx = blockIdx.x;
    const int row = by * TS + threadIdx.y, col = bx * TS + threadIdx.x;
    const bool zero_tile = UPPER ? (by > bx) : (by < bx);
    if (zero_tile) {
        if (row < n && col < n) C[(int64_t)row * n + col] = 0.0f;
        return;
    }
    const int t_begin = UPPER ? by : bx;
    const int t_end = UPPER ? bx : by;
    float acc = 0.0f;
    for (int t = t_begin; t <= t_end; ++t) {
        const int k_a = t * TS + threadIdx.x, k_b = t * TS + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = (row < n && k_a < n) ? A[(int64_t)row * n + k_a] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = (k_b < n && col < n) ? B[(int64_t)k_b * n + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TS; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < n && col < n) {
        const bool keep = UPPER ? (row <= col) : (row >= col);
        C[(int64_t)row * n + col] = keep ? acc : 0.0f;
    }
}

template <bool UPPER>
static torch::Tensor tri_matmul(torch::Tensor A, torch::Tensor B) {
    TORCH_CHECK(A.is_cuda() && B.is_cuda(), "inputs must be CUDA tensors");
    TORCH_CHECK(A.dim() == 2 && A.size(0) == A.size(1) && B.sizes() == A.sizes(), "square matrices of one size");
    A = A.contiguous();
    B = B.contiguous();
    const int n = A.size(0);
    auto C = torch::empty_like(A);
    dim3 threads(TS, TS);
    dim3 blocks((n + TS - 1) / TS, (n + TS - 1) / TS);
    tri_matmul_kernel<UPPER><<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        A.data_ptr<float>(), B.data_ptr<float>(), C.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return C;
}

torch::Tensor triu_matmul(torch::Tensor A, torch::Tensor B) { return tri_matmul<true>(A, B); }
torch::Tensor tril_matmul(torch::Tensor A, torch::Tensor B) { return tri_matmul<false>(A, B); }
"""

tri_cpp_source = """
torch::Tensor triu_matmul(torch::Tensor A, torch::Tensor B);
torch::Tensor tril_matmul(torch::Tensor A, torch::Tensor B);
"""

tri = load_inline(
    name="triangular_matmul_ext",
    cpp_sources=tri_cpp_source,
    cuda_sources=tri_cuda_source,
    functions=['triu_matmul', 'tril_matmul'],
    verbose=True,
    extra_cuda_cflags=["-O3", "--use_fast_math"],
)

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return tri.tril_matmul(A, B)
