# corpus: problem=kb_l2_009_matmul_subtract_multiply_relu device=cuda expect=accepted policy=kernelbench
# style: module-level alias of an in-place epilogue
# class: 1,6
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

epi_cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime.h>

// In-place epilogues on a GEMM output that PyTorch (cuBLAS) produced: one read and one write per element.
template <typename F>
__global__ void inplace_kernel(float* __restrict__ y, int64_t n, int64_t cols, F f) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        y[i] = f(y[i], i % cols);
}

template <typename F>
static torch::Tensor apply_inplace(torch::Tensor y, F f) {
    TORCH_CHECK(y.is_cuda() && y.is_contiguous() && y.scalar_type() == torch::kFloat32, "contiguous float32 CUDA tensor");
    const int64_t n = y.numel();
    if (n == 0) return y;
    const int64_t cols = y.size(-1);
    const int threads = 256;
    const int blocks = (int)std::min<int64_t>((n + threads - 1) / threads, 132 * 32);
    inplace_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(y.data_ptr<float>(), n, cols, f);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}

struct MulLeaky { float m, s; __device__ float operator()(float v, int64_t) const { v *= m; return v > 0.f ? v : v * s; } };
struct BiasRelu { const float* b; __device__ float operator()(float v, int64_t c) const { return fmaxf(v + b[c], 0.f); } };
struct SubMulRelu { float s, m; __device__ float operator()(float v, int64_t) const { return fmaxf((v - s) * m, 0.f); } };
struct MishMish {
    __device__ static float mish(float v) { return v * tanhf(v > 20.f ? v : log1pf(expf(v))); }
    __device__ float operator()(float v, int64_t) const { return mish(mish(v)); }
};
struct ScaleResidual { float s; __device__ float operator()(float v, int64_t) const { return v * s + v; } };
struct DivGelu {
    float d;
    __device__ float operator()(float v, int64_t) const { v = v / d; return 0.5f * v * (1.f + erff(v * 0.7071067811865476f)); }
};

torch::Tensor mul_leaky_relu_(torch::Tensor y, double multiplier, double slope) {
    return apply_inplace(y, MulLeaky{(float)multiplier, (float)slope});
}
torch::Tensor bias_relu_(torch::Tensor y, torch::Tensor bias) {
    TORCH_CHECK(bias.is_cuda() && bias.numel() == y.size(-1), "bias must match the last dimension");
    return apply_inplace(y, BiasRelu{bias.contiguous().data_ptr<float>()});
}
torch::Tensor sub_mul_relu_(torch::Tensor y, double sub, double mul) { return apply_inplace(y, SubMulRelu{(float)sub, (float)mul}); }
torch::Tensor mish_mish_(torch::Tensor y) { return apply_inplace(y, MishMish{}); }
torch::Tensor scale_residual_(torch::Tensor y, double scale) { return apply_inplace(y, ScaleResidual{(float)scale}); }
torch::Tensor div_gelu_(torch::Tensor y, double divisor) { return apply_inplace(y, DivGelu{(float)divisor}); }
"""

epi_cpp_source = """
torch::Tensor mul_leaky_relu_(torch::Tensor y, double multiplier, double slope);
torch::Tensor bias_relu_(torch::Tensor y, torch::Tensor bias);
torch::Tensor sub_mul_relu_(torch::Tensor y, double sub, double mul);
torch::Tensor mish_mish_(torch::Tensor y);
torch::Tensor scale_residual_(torch::Tensor y, double scale);
torch::Tensor div_gelu_(torch::Tensor y, double divisor);
"""

epi = load_inline(
    name="fused_epilogue_ext",
    cpp_sources=epi_cpp_source,
    cuda_sources=epi_cuda_source,
    functions=['mul_leaky_relu_', 'bias_relu_', 'sub_mul_relu_', 'mish_mish_', 'scale_residual_', 'div_gelu_'],
    verbose=True,
    extra_cuda_cflags=["-O3", "--use_fast_math"],
)

sub_mul_relu = epi.sub_mul_relu_


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, subtract_value, multiply_value):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.params = (subtract_value, multiply_value)

    def forward(self, x):
        return sub_mul_relu(self.linear(x), *self.params)
