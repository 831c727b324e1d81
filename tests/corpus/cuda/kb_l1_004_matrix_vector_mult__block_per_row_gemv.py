# corpus: problem=kb_l1_004_matrix_vector_mult device=cuda expect=accepted policy=both
# style: block-per-row GEMV, warp shuffles + shared memory, 2^31 elements in A (int64 offsets)
# class: 4,6
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

gemv_cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

// One block per row of A; K can exceed 2^20, and row * K exceeds 2^31, so offsets are 64-bit.
__global__ void gemv_kernel(const float* __restrict__ A, const float* __restrict__ x, float* __restrict__ y,
                            int64_t M, int64_t K) {
    const int64_t row = blockIdx.x;
    const float* a = A + row * K;
    float sum = 0.0f;
    for (int64_t k = threadIdx.x; k < K; k += blockDim.x) sum += a[k] * x[k];
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffff, sum, offset);
    __shared__ float warp_sums[32];
    const int lane = threadIdx.x % 32, wid = threadIdx.x / 32;
    if (lane == 0) warp_sums[wid] = sum;
    __syncthreads();
    if (wid == 0) {
        sum = (lane < blockDim.x / 32) ? warp_sums[lane] : 0.0f;
        for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffff, sum, offset);
        if (lane == 0) y[row] = sum;
    }
}

torch::Tensor gemv_cuda(torch::Tensor A, torch::Tensor B) {
    TORCH_CHECK(A.is_cuda() && B.is_cuda(), "CUDA tensors expected");
    TORCH_CHECK(A.dim() == 2 && B.numel() == A.size(1), "A (M, K) and B (K, 1) expected");
    auto a = A.contiguous();
    auto b = B.contiguous();
    const int64_t M = a.size(0), K = a.size(1);
    auto y = torch::empty({M, 1}, a.options());
    gemv_kernel<<<(unsigned int)M, 512>>>(a.data_ptr<float>(), b.data_ptr<float>(), y.data_ptr<float>(), M, K);
    cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "gemv_kernel: ", cudaGetErrorString(err));
    return y;
}
"""

gemv_cpp_source = """
torch::Tensor gemv_cuda(torch::Tensor A, torch::Tensor B);
"""

gemv = load_inline(
    name="gemv_ext",
    cpp_sources=gemv_cpp_source,
    cuda_sources=gemv_cuda_source,
    functions=['gemv_cuda'],
    verbose=True,
    extra_cuda_cflags=["-O3", "--use_fast_math"],
)

class ModelNew(nn.Module):
    """A (2048, 1048576) @ B (1048576, 1): one block per row, warp-shuffle reduction."""

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return gemv.gemv_cuda(A, B)
