# corpus: problem=kb_l1_037_frobenius_norm device=cuda expect=accepted policy=kernelbench
# style: torch::sqrt(partial.sum()) in the extension's host code between two kernels; self.op alias
# class: 1,3,4
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

fro_aten_cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

constexpr int kThreads = 512;

// Each block writes the sum of squares of its grid-stride slice (in double) to partial[blockIdx.x].
__global__ void sum_squares_kernel(const float* __restrict__ x, double* __restrict__ partial, int64_t n) {
    double acc = 0.0;
    for (int64_t i = (int64_t)blockIdx.x * kThreads + threadIdx.x; i < n; i += (int64_t)gridDim.x * kThreads) {
        const double v = x[i];
        acc += v * v;
    }
    for (int off = 16; off > 0; off >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, off);
    __shared__ double warp_acc[kThreads / 32];
    if ((threadIdx.x & 31) == 0) warp_acc[threadIdx.x >> 5] = acc;
    __syncthreads();
    if (threadIdx.x < 32) {
        acc = threadIdx.x < kThreads / 32 ? warp_acc[threadIdx.x] : 0.0;
        for (int off = 16; off > 0; off >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, off);
        if (threadIdx.x == 0) partial[blockIdx.x] = acc;
    }
}

__global__ void divide_by_norm_kernel(const float* __restrict__ x, float* __restrict__ y, const double* __restrict__ norm, int64_t n) {
    const float inv = (float)(1.0 / norm[0]);
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) y[i] = x[i] * inv;
}

// The partial sums are folded with ATen (sum, sqrt): a tiny tensor, the bulk work stays in the two kernels.
torch::Tensor frobenius_normalize(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "x must be on CUDA");
    x = x.contiguous();
    const int64_t n = x.numel();
    const int parts = (int)std::max<int64_t>(1, std::min<int64_t>((n + kThreads - 1) / kThreads, 1024));
    auto partial = torch::empty({parts}, x.options().dtype(torch::kFloat64));
    sum_squares_kernel<<<parts, kThreads>>>(x.data_ptr<float>(), partial.data_ptr<double>(), n);
    auto norm = torch::sqrt(partial.sum());
    auto y = torch::empty_like(x);
    const int blocks = (int)std::min<int64_t>((n + 255) / 256, 132 * 16);
    divide_by_norm_kernel<<<std::max(blocks, 1), 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), norm.data_ptr<double>(), n);
    return y;
}
"""

fro_aten_cpp_source = """
torch::Tensor frobenius_normalize(torch::Tensor x);
"""

fro_aten = load_inline(
    name="frobenius_norm_aten_ext",
    cpp_sources=fro_aten_cpp_source,
    cuda_sources=fro_aten_cuda_source,
    functions=['frobenius_normalize'],
    verbose=True,
    extra_cuda_cflags=["-O3", "--use_fast_math"],
)

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.normalize = fro_aten.frobenius_normalize

    def forward(self, x):
        return self.normalize(x)
