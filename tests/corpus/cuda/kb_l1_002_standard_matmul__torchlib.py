# corpus: problem=kb_l1_002_standard_matmul device=cuda expect=accepted policy=both
# style: shared-memory tiled GEMM registered with TORCH_LIBRARY
# class: 1,6
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Shared-memory tiled SGEMM, registered as a PyTorch operator (torch.ops.kb_h_tiled_mm.mm)
# through TORCH_LIBRARY instead of pybind11 bindings.

cuda_source = r"""
#include <torch/types.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAException.h>

template <int TILE>
__global__ void tiled_mm_kernel(const float* __restrict__ A,
                                const float* __restrict__ B,
                                float* __restrict__ C,
                                int M, int K, int N) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE + 1];

    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;

    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        const int a_k = k0 + tx;
        const int b_k = k0 + ty;
        As[ty][tx] = (row < M && a_k < K) ? A[(size_t)row * K + a_k] : 0.0f;
        Bs[ty][tx] = (b_k < K && col < N) ? B[(size_t)b_k * N + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) {
            acc = fmaf(As[ty][k], Bs[k][tx], acc);
        }
        __syncthreads();
    }
    if (row < M && col < N) {
        C[(size_t)row * N + col] = acc;
    }
}

torch::Tensor tiled_mm_cuda(const torch::Tensor& A_in, const torch::Tensor& B_in) {
    TORCH_CHECK(A_in.is_cuda() && B_in.is_cuda(), "tiled_mm: inputs must be CUDA tensors");
    TORCH_CHECK(A_in.dim() == 2 && B_in.dim() == 2, "tiled_mm: expected 2-D matrices");
    TORCH_CHECK(A_in.size(1) == B_in.size(0), "tiled_mm: inner dimensions differ");
    TORCH_CHECK(A_in.scalar_type() == torch::kFloat32 && B_in.scalar_type() == torch::kFloat32,
                "tiled_mm: float32 only");

    const c10::cuda::CUDAGuard guard(A_in.device());
    auto A = A_in.contiguous();
    auto B = B_in.contiguous();
    const int M = (int)A.size(0);
    const int K = (int)A.size(1);
    const int N = (int)B.size(1);
    auto C = torch::empty({M, N}, A.options());
    if (M == 0 || N == 0) return C;
    if (K == 0) return C.zero_();

    constexpr int TILE = 16;
    dim3 block(TILE, TILE);
    dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    tiled_mm_kernel<TILE><<<grid, block, 0, stream>>>(
        A.data_ptr<float>(), B.data_ptr<float>(), C.data_ptr<float>(), M, K, N);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return C;
}
"""

cpp_source = r"""
#include <torch/library.h>

torch::Tensor tiled_mm_cuda(const torch::Tensor& A, const torch::Tensor& B);

TORCH_LIBRARY(kb_h_tiled_mm, m) {
    m.def("mm(Tensor A, Tensor B) -> Tensor");
}

TORCH_LIBRARY_IMPL(kb_h_tiled_mm, CUDA, m) {
    m.impl("mm", &tiled_mm_cuda);
}
"""

# is_python_module=False: the shared library is loaded with torch.ops.load_library,
# which runs the static TORCH_LIBRARY registrations.
load_inline(
    name="kb_l1_002_standard_matmul__torchlib",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    extra_cflags=["-O3"],
    extra_cuda_cflags=["-O3", "--use_fast_math"],
    is_python_module=False,
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.ops.kb_h_tiled_mm.mm(A, B)
