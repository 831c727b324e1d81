# corpus: problem=kb_l1_040_layer_norm device=cuda expect=accepted policy=both
# style: helper function taking the module
# class: 2,6
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

ln_cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime.h>

// Stage 1: many blocks per sample, each adds its slice's sum and sum of squares into stats[2 * sample].
__global__ void ln_partial_stats(const float* __restrict__ x, double* __restrict__ stats, int64_t D) {
    const int sample = blockIdx.y;
    const float* xs = x + (int64_t)sample * D;
    double s = 0.0, ss = 0.0;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < D; i += (int64_t)gridDim.x * blockDim.x) {
        double v = xs[i];
        s += v;
        ss += v * v;
    }
    for (int o = 16; o > 0; o >>= 1) {
        s += __shfl_xor_sync(0xffffffff, s, o);
        ss += __shfl_xor_sync(0xffffffff, ss, o);
    }
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(&stats[2 * sample], s);
        atomicAdd(&stats[2 * sample + 1], ss);
    }
}

// Stage 2: normalize with the per-element affine parameters (shape = the normalized shape).
__global__ void ln_apply(const float* __restrict__ x, float* __restrict__ y, const double* __restrict__ stats,
                         const float* __restrict__ w, const float* __restrict__ b, int64_t D, int64_t total, float eps) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t sample = i / D, d = i % D;
        const double mean = stats[2 * sample] / D;
        const double var = stats[2 * sample + 1] / D - mean * mean;
        const float inv = rsqrtf((float)var + eps);
        y[i] = ((x[i] - (float)mean) * inv) * w[d] + b[d];
    }
}

torch::Tensor layer_norm_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    x = x.contiguous();
    const int64_t D = weight.numel();
    const int64_t samples = x.numel() / D;
    auto stats = torch::zeros({samples, 2}, x.options().dtype(torch::kFloat64));
    auto y = torch::empty_like(x);
    auto stream = at::cuda::getCurrentCUDAStream();
    dim3 grid((unsigned int)std::min<int64_t>((D + 255) / 256, 256), (unsigned int)samples);
    ln_partial_stats<<<grid, 256, 0, stream>>>(x.data_ptr<float>(), stats.data_ptr<double>(), D);
    const int64_t total = x.numel();
    const int blocks = (int)std::min<int64_t>((total + 255) / 256, 65535);
    ln_apply<<<blocks, 256, 0, stream>>>(x.data_ptr<float>(), y.data_ptr<float>(), stats.data_ptr<double>(),
                                         weight.contiguous().data_ptr<float>(), bias.contiguous().data_ptr<float>(),
                                         D, total, (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

ln_cpp_source = """
torch::Tensor layer_norm_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps);
"""

ln = load_inline(
    name="layer_norm_ext",
    cpp_sources=ln_cpp_source,
    cuda_sources=ln_cuda_source,
    functions=['layer_norm_forward'],
    verbose=True,
    extra_cuda_cflags=["-O3", "--use_fast_math"],
)

def fused_layer_norm(x: torch.Tensor, module: nn.LayerNorm) -> torch.Tensor:
    return ln.layer_norm_forward(x.contiguous(), module.weight, module.bias, module.eps)


class ModelNew(nn.Module):
    def __init__(self, normalized_shape):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape)

    def forward(self, x):
        return fused_layer_norm(x, self.ln)
