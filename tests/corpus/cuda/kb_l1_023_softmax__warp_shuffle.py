# corpus: problem=kb_l1_023_softmax device=cuda expect=accepted policy=both
# style: hand-written PYBIND11_MODULE, dynamic shared memory and __shfl_down_sync row reductions
# class: 6
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

softmax_cpp_source = r"""
#include <torch/extension.h>

torch::Tensor softmax_lastdim_cuda(torch::Tensor x);

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("softmax_lastdim", &softmax_lastdim_cuda, "Softmax over the last dimension (CUDA)");
}
"""

softmax_cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime.h>
#include <math.h>

__device__ __forceinline__ float warp_reduce_max(float v) {
    #pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
        v = fmaxf(v, __shfl_down_sync(0xffffffff, v, offset));
    return v;
}

__device__ __forceinline__ float warp_reduce_sum(float v) {
    #pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_down_sync(0xffffffff, v, offset);
    return v;
}

// Block-wide reduction; `smem` holds one float per warp. blockDim.x must be a multiple of 32.
template <bool IS_MAX>
__device__ float block_reduce(float v, float* smem) {
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int num_warps = blockDim.x >> 5;

    v = IS_MAX ? warp_reduce_max(v) : warp_reduce_sum(v);
    if (lane == 0) smem[warp] = v;
    __syncthreads();

    if (warp == 0) {
        float t = (lane < num_warps) ? smem[lane] : (IS_MAX ? -INFINITY : 0.0f);
        t = IS_MAX ? warp_reduce_max(t) : warp_reduce_sum(t);
        if (lane == 0) smem[0] = t;
    }
    __syncthreads();
    const float result = smem[0];
    __syncthreads();  // smem may be reused by the next reduction
    return result;
}

__global__ void softmax_rows_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t cols) {
    extern __shared__ float smem[];  // num_warps floats
    const int64_t row = blockIdx.x;
    const float* xr = x + row * cols;
    float* yr = y + row * cols;

    float local_max = -INFINITY;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
        local_max = fmaxf(local_max, xr[c]);
    const float row_max = block_reduce<true>(local_max, smem);

    float local_sum = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
        local_sum += __expf(xr[c] - row_max);
    const float row_sum = block_reduce<false>(local_sum, smem);
    const float inv_sum = 1.0f / row_sum;

    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
        yr[c] = __expf(xr[c] - row_max) * inv_sum;
}

torch::Tensor softmax_lastdim_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    TORCH_CHECK(x.dim() >= 1, "x must have at least one dimension");

    auto input = x.contiguous();
    auto output = torch::empty_like(input);
    const int64_t cols = input.size(-1);
    if (input.numel() == 0) return output;
    const int64_t rows = input.numel() / cols;

    const int threads = cols >= 4096 ? 1024 : (cols >= 1024 ? 512 : 256);
    const size_t shmem = (threads / 32) * sizeof(float);
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    softmax_rows_kernel<<<rows, threads, shmem, stream>>>(
        input.data_ptr<float>(), output.data_ptr<float>(), cols);
    cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "softmax kernel failed: ", cudaGetErrorString(err));
    return output;
}
"""

softmax_ext = load_inline(
    name="kb_l1_023_softmax__warp_shuffle",
    cpp_sources=softmax_cpp_source,
    cuda_sources=softmax_cuda_source,
    extra_cuda_cflags=["-O3", "--use_fast_math"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # softmax over dim=1; for a (batch, dim) tensor that is the last dim
        if x.dim() == 2:
            return softmax_ext.softmax_lastdim(x)
        return softmax_ext.softmax_lastdim(x.movedim(1, -1)).movedim(-1, 1)
