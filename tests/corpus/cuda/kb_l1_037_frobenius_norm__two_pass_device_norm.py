# corpus: problem=kb_l1_037_frobenius_norm device=cuda expect=accepted policy=both
# style: sum of squares in double with warp shuffles, partials folded on the device, 7.5 GiB input
# class: 4,6
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

fro_cuda_source = r"""
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

// One block folds the partial sums and stores 1 / sqrt(total) in partial[num_partials].
__global__ void finish_norm_kernel(double* __restrict__ partial, int num_partials) {
    __shared__ double sh[kThreads];
    double acc = 0.0;
    for (int i = threadIdx.x; i < num_partials; i += kThreads) acc += partial[i];
    sh[threadIdx.x] = acc;
    __syncthreads();
    for (int s = kThreads / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) sh[threadIdx.x] += sh[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[num_partials] = 1.0 / sqrt(sh[0]);
}

__global__ void scale_by_kernel(const float* __restrict__ x, float* __restrict__ y, const double* __restrict__ inv, int64_t n) {
    const float s = (float)(*inv);
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) y[i] = x[i] * s;
}

int64_t fro_partials_needed(int64_t n) {
    return std::max<int64_t>(1, std::min<int64_t>((n + kThreads - 1) / kThreads, 1024)) + 1;
}

// `workspace` holds at least fro_partials_needed(n) doubles; it is overwritten, never read before written.
torch::Tensor fro_normalize_into(torch::Tensor x, torch::Tensor workspace) {
    TORCH_CHECK(x.is_cuda() && x.is_contiguous() && x.scalar_type() == torch::kFloat32, "contiguous float32 CUDA x");
    const int64_t n = x.numel();
    const int64_t needed = fro_partials_needed(n);
    TORCH_CHECK(workspace.scalar_type() == torch::kFloat64 && workspace.numel() >= needed, "workspace too small");
    const int parts = (int)(needed - 1);
    double* ws = workspace.data_ptr<double>();
    auto y = torch::empty_like(x);
    sum_squares_kernel<<<parts, kThreads>>>(x.data_ptr<float>(), ws, n);
    finish_norm_kernel<<<1, kThreads>>>(ws, parts);
    const int blocks = (int)std::min<int64_t>((n + 255) / 256, 132 * 16);
    scale_by_kernel<<<std::max(blocks, 1), 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), ws + parts, n);
    cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "frobenius kernels: ", cudaGetErrorString(err));
    return y;
}

torch::Tensor fro_normalize(torch::Tensor x) {
    x = x.contiguous();
    auto ws = torch::empty({fro_partials_needed(x.numel())}, x.options().dtype(torch::kFloat64));
    return fro_normalize_into(x, ws);
}
"""

fro_cpp_source = """
torch::Tensor fro_normalize(torch::Tensor x);
torch::Tensor fro_normalize_into(torch::Tensor x, torch::Tensor workspace);
int64_t fro_partials_needed(int64_t n);
"""

fro = load_inline(
    name="frobenius_norm_ext",
    cpp_sources=fro_cpp_source,
    cuda_sources=fro_cuda_source,
    functions=['fro_normalize', 'fro_normalize_into', 'fro_partials_needed'],
    verbose=True,
    extra_cuda_cflags=["-O3", "--use_fast_math"],
)

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return fro.fro_normalize(x)
