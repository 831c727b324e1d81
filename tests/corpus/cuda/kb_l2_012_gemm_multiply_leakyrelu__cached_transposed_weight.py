# corpus: problem=kb_l2_012_gemm_multiply_leakyrelu device=cuda expect=accepted policy=both
# style: weight transposed by a custom kernel at first call, cached per (data_ptr, _version)
# class: 8
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

wt_ext_cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

#define T 32

__global__ void transpose_kernel(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    __shared__ float tile[T][T + 1];
    int c = blockIdx.x * T + threadIdx.x, r = blockIdx.y * T + threadIdx.y;
    if (r < rows && c < cols) tile[threadIdx.y][threadIdx.x] = in[(int64_t)r * cols + c];
    __syncthreads();
    c = blockIdx.y * T + threadIdx.x;
    r = blockIdx.x * T + threadIdx.y;
    if (r < cols && c < rows) out[(int64_t)r * rows + c] = tile[threadIdx.x][threadIdx.y];
}

// y = leaky_relu((x @ wt + bias) * multiplier, slope) with wt (K, N) already transposed: both tiles load coalesced.
__global__ void gemm_mul_leaky_kernel(const float* __restrict__ x, const float* __restrict__ wt, const float* __restrict__ bias,
                                      float* __restrict__ y, int M, int N, int K, float multiplier, float slope) {
    __shared__ float xs[T][T];
    __shared__ float bs[T][T];
    const int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += T) {
        xs[threadIdx.y][threadIdx.x] = (row < M && k0 + threadIdx.x < K) ? x[(int64_t)row * K + k0 + threadIdx.x] : 0.0f;
        bs[threadIdx.y][threadIdx.x] = (k0 + threadIdx.y < K && col < N) ? wt[(int64_t)(k0 + threadIdx.y) * N + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < T; ++k) acc += xs[threadIdx.y][k] * bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) {
        float v = (acc + bias[col]) * multiplier;
        y[(int64_t)row * N + col] = v > 0.0f ? v : v * slope;
    }
}

torch::Tensor transpose_cuda(torch::Tensor w) {
    TORCH_CHECK(w.is_cuda() && w.dim() == 2, "2D CUDA tensor expected");
    w = w.contiguous();
    const int rows = w.size(0), cols = w.size(1);
    auto out = torch::empty({cols, rows}, w.options());
    dim3 block(T, T), grid((cols + T - 1) / T, (rows + T - 1) / T);
    transpose_kernel<<<grid, block>>>(w.data_ptr<float>(), out.data_ptr<float>(), rows, cols);
    return out;
}

torch::Tensor gemm_mul_leaky(torch::Tensor x, torch::Tensor wt, torch::Tensor bias, double multiplier, double slope) {
    TORCH_CHECK(x.is_cuda() && wt.is_cuda() && bias.is_cuda(), "CUDA tensors expected");
    TORCH_CHECK(x.size(1) == wt.size(0) && bias.numel() == wt.size(1), "x (M, K), wt (K, N), bias (N)");
    x = x.contiguous();
    const int M = x.size(0), K = x.size(1), N = wt.size(1);
    auto y = torch::empty({M, N}, x.options());
    dim3 block(T, T), grid((N + T - 1) / T, (M + T - 1) / T);
    gemm_mul_leaky_kernel<<<grid, block>>>(x.data_ptr<float>(), wt.data_ptr<float>(), bias.contiguous().data_ptr<float>(),
                                           y.data_ptr<float>(), M, N, K, (float)multiplier, (float)slope);
    cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "gemm_mul_leaky_kernel: ", cudaGetErrorString(err));
    return y;
}
"""

wt_ext_cpp_source = """
torch::Tensor transpose_cuda(torch::Tensor w);
torch::Tensor gemm_mul_leaky(torch::Tensor x, torch::Tensor wt, torch::Tensor bias, double multiplier, double slope);
"""

wt_ext = load_inline(
    name="gemm_pretransposed_ext",
    cpp_sources=wt_ext_cpp_source,
    cuda_sources=wt_ext_cuda_source,
    functions=['transpose_cuda', 'gemm_mul_leaky'],
    verbose=True,
    extra_cuda_cflags=["-O3", "--use_fast_math"],
)

class ModelNew(nn.Module):
    """Transposes the weight once with a custom kernel and reuses it while the weight is unchanged."""

    def __init__(self, in_features, out_features, multiplier, negative_slope):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.multiplier = multiplier
        self.negative_slope = negative_slope
        self._wt = None
        self._wt_key = None

    def forward(self, x):
        w = self.gemm.weight
        key = (w.data_ptr(), w._version, w.device)
        if self._wt is None or self._wt_key != key:
            self._wt = wt_ext.transpose_cuda(w.detach())
            self._wt_key = key
        return wt_ext.gemm_mul_leaky(x, self._wt, self.gemm.bias, self.multiplier, self.negative_slope)
