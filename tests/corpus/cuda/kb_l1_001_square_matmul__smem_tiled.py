# corpus: problem=kb_l1_001_square_matmul device=cuda expect=accepted policy=both
# style: shared-memory tiled GEMM, extension kept on the module, getCurrentCUDAStream + CUDAGuard + C10_CUDA_KERNEL_LAUNCH_CHECK
# class: 1,6
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Shared-memory tiled SGEMM: C[M, N] = A[M, K] @ B[K, N]
matmul_cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAException.h>

#define TILE 32

__global__ void tiled_matmul_kernel(const float* __restrict__ A,
                                    const float* __restrict__ B,
                                    float* __restrict__ C,
                                    int M, int K, int N) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];

    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;

    float acc = 0.0f;
    const int num_tiles = (K + TILE - 1) / TILE;
    for (int t = 0; t < num_tiles; ++t) {
        const int a_col = t * TILE + tx;
        const int b_row = t * TILE + ty;
        As[ty][tx] = (row < M && a_col < K) ? A[(size_t)row * K + a_col] : 0.0f;
        Bs[ty][tx] = (b_row < K && col < N) ? B[(size_t)b_row * N + col] : 0.0f;
        __syncthreads();

        #pragma unroll
        for (int k = 0; k < TILE; ++k) {
            acc += As[ty][k] * Bs[k][tx];
        }
        __syncthreads();
    }

    if (row < M && col < N) {
        C[(size_t)row * N + col] = acc;
    }
}

torch::Tensor square_matmul_cuda(torch::Tensor A, torch::Tensor B) {
    TORCH_CHECK(A.is_cuda() && B.is_cuda(), "A and B must be CUDA tensors");
    TORCH_CHECK(A.dim() == 2 && B.dim() == 2, "A and B must be 2D");
    TORCH_CHECK(A.size(1) == B.size(0), "inner dimensions must match");
    TORCH_CHECK(A.scalar_type() == torch::kFloat32 && B.scalar_type() == torch::kFloat32,
                "only float32 is supported");

    const c10::cuda::CUDAGuard device_guard(A.device());
    auto a = A.contiguous();
    auto b = B.contiguous();

    const int M = static_cast<int>(a.size(0));
    const int K = static_cast<int>(a.size(1));
    const int N = static_cast<int>(b.size(1));
    auto C = torch::empty({M, N}, a.options());
    if (M == 0 || N == 0) {
        return C;
    }

    dim3 block(TILE, TILE);
    dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    tiled_matmul_kernel<<<grid, block, 0, stream>>>(
        a.data_ptr<float>(), b.data_ptr<float>(), C.data_ptr<float>(), M, K, N);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return C;
}
"""

matmul_cpp_source = "torch::Tensor square_matmul_cuda(torch::Tensor A, torch::Tensor B);"

square_matmul = load_inline(
    name="kb_l1_001_square_matmul__smem_tiled",
    cpp_sources=matmul_cpp_source,
    cuda_sources=matmul_cuda_source,
    functions=["square_matmul_cuda"],
    extra_cuda_cflags=["-O3", "--use_fast_math"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.square_matmul = square_matmul

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return self.square_matmul.square_matmul_cuda(A, B)
