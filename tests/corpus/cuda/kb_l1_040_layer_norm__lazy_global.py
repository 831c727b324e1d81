# corpus: problem=kb_l1_040_layer_norm device=cuda expect=accepted policy=both
# style: global extension loaded on first forward, CUDAGuard and a launch check, Welford per row
# class: 1,6
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

layernorm_cuda_src = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

constexpr int LN_THREADS = 1024;

__device__ __forceinline__ float warp_sum(float v) {
    #pragma unroll
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_xor_sync(0xffffffff, v, off);
    return v;
}

// every thread gets the block-wide sum
__device__ float block_sum(float v) {
    __shared__ float partial[32];
    const int lane = threadIdx.x & 31;
    const int wid = threadIdx.x >> 5;
    v = warp_sum(v);
    if (lane == 0) partial[wid] = v;
    __syncthreads();
    const int nwarps = blockDim.x >> 5;
    float t = (threadIdx.x < nwarps) ? partial[threadIdx.x] : 0.0f;
    if (wid == 0) t = warp_sum(t);
    if (threadIdx.x == 0) partial[0] = t;
    __syncthreads();
    const float total = partial[0];
    __syncthreads();
    return total;
}

// one block per normalised row of length N
__global__ void layernorm_fwd_kernel(const float* __restrict__ x,
                                     const float* __restrict__ gamma,
                                     const float* __restrict__ beta,
                                     float* __restrict__ y,
                                     int64_t N, float eps) {
    const float* xr = x + (int64_t)blockIdx.x * N;
    float* yr = y + (int64_t)blockIdx.x * N;

    float s = 0.0f;
    for (int64_t i = threadIdx.x; i < N; i += blockDim.x) s += __ldg(xr + i);
    const float mean = block_sum(s) / (float)N;

    float sq = 0.0f;
    for (int64_t i = threadIdx.x; i < N; i += blockDim.x) {
        const float d = __ldg(xr + i) - mean;
        sq += d * d;
    }
    const float var = block_sum(sq) / (float)N;  // biased, like nn.LayerNorm
    const float rstd = rsqrtf(var + eps);

    for (int64_t i = threadIdx.x; i < N; i += blockDim.x) {
        yr[i] = (__ldg(xr + i) - mean) * rstd * __ldg(gamma + i) + __ldg(beta + i);
    }
}

torch::Tensor layernorm_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps) {
    TORCH_CHECK(x.is_cuda() && weight.is_cuda() && bias.is_cuda(), "all tensors must be on CUDA");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    const int64_t N = weight.numel();
    TORCH_CHECK(N > 0 && bias.numel() == N, "weight/bias size mismatch");
    TORCH_CHECK(x.numel() % N == 0, "input does not end with normalized_shape");

    const c10::cuda::CUDAGuard guard(x.device());
    auto xc = x.contiguous();
    auto w = weight.contiguous();
    auto b = bias.contiguous();
    auto y = torch::empty_like(xc);
    const int64_t rows = xc.numel() / N;
    if (rows == 0) return y;

    auto stream = at::cuda::getCurrentCUDAStream();
    layernorm_fwd_kernel<<<(unsigned int)rows, LN_THREADS, 0, stream>>>(
        xc.data_ptr<float>(), w.data_ptr<float>(), b.data_ptr<float>(), y.data_ptr<float>(),
        N, static_cast<float>(eps));
    C10_CUDA_CHECK(cudaGetLastError());
    return y;
}
"""

layernorm_cpp_src = "torch::Tensor layernorm_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps);"

_ext = None


def _get_ext():
    """Compile the extension on first use only."""
    global _ext
    if _ext is None:
        _ext = load_inline(
            name="kb_l1_040_layer_norm__lazy_global",
            cpp_sources=layernorm_cpp_src,
            cuda_sources=layernorm_cuda_src,
            functions=["layernorm_forward"],
            extra_cuda_cflags=["-O3", "--use_fast_math"],
            verbose=False,
        )
    return _ext


class ModelNew(nn.Module):
    def __init__(self, normalized_shape: tuple):
        super().__init__()
        # keep nn.LayerNorm for its parameters (weight / bias / eps)
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weight = self.ln.weight
        bias = self.ln.bias
        if weight is None:
            weight = torch.ones(self.ln.normalized_shape, device=x.device, dtype=x.dtype)
        if bias is None:
            bias = torch.zeros(self.ln.normalized_shape, device=x.device, dtype=x.dtype)
        return _get_ext().layernorm_forward(x, weight, bias, self.ln.eps)
