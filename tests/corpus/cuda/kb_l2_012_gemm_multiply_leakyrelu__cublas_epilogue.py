# corpus: problem=kb_l2_012_gemm_multiply_leakyrelu device=cuda expect=accepted policy=kernelbench
# style: at::matmul (cuBLAS) in the extension, then an in-place float4 epilogue
# class: 3,6
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_src = """
torch::Tensor linear_scale_leakyrelu(torch::Tensor x, torch::Tensor weight, torch::Tensor bias,
                                     double multiplier, double negative_slope);
"""

cuda_src = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAException.h>
#include <cstdint>

__device__ __forceinline__ float scale_leaky(float v, float mult, float slope) {
    v *= mult;
    return v > 0.0f ? v : v * slope;
}

// In-place epilogue on the GEMM output: y = leaky((y + bias) * mult), 4 elements per thread.
__global__ void bias_scale_leaky_vec4_kernel(float* __restrict__ y, const float* __restrict__ bias,
                                             int64_t n_vec, int cols, float mult, float slope) {
    float4* y4 = reinterpret_cast<float4*>(y);
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n_vec;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int col = (int)((i * 4) % cols);
        float4 v = y4[i];
        const float4 b = __ldg(reinterpret_cast<const float4*>(bias + col));
        v.x = scale_leaky(v.x + b.x, mult, slope);
        v.y = scale_leaky(v.y + b.y, mult, slope);
        v.z = scale_leaky(v.z + b.z, mult, slope);
        v.w = scale_leaky(v.w + b.w, mult, slope);
        y4[i] = v;
    }
}

__global__ void bias_scale_leaky_kernel(float* __restrict__ y, const float* __restrict__ bias,
                                        int64_t n, int cols, float mult, float slope) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        y[i] = scale_leaky(y[i] + __ldg(bias + (i % cols)), mult, slope);
    }
}

torch::Tensor linear_scale_leakyrelu(torch::Tensor x, torch::Tensor weight, torch::Tensor bias,
                                     double multiplier, double negative_slope) {
    TORCH_CHECK(x.is_cuda() && weight.is_cuda() && bias.is_cuda(), "inputs must be CUDA tensors");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "only float32 is supported");
    TORCH_CHECK(weight.dim() == 2 && x.size(-1) == weight.size(1), "shape mismatch");
    const c10::cuda::CUDAGuard guard(x.device());

    // GEMM through cuBLAS
    auto y = at::matmul(x, weight.t()).contiguous();
    auto b = bias.contiguous();
    const int cols = (int)weight.size(0);
    TORCH_CHECK(b.numel() == cols, "bias size mismatch");
    const int64_t n = y.numel();
    if (n == 0) return y;

    const float mult = static_cast<float>(multiplier);
    const float slope = static_cast<float>(negative_slope);
    const int threads = 256;
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();

    float* yp = y.data_ptr<float>();
    const float* bp = b.data_ptr<float>();
    const bool aligned = (reinterpret_cast<std::uintptr_t>(yp) % 16 == 0) &&
                         (reinterpret_cast<std::uintptr_t>(bp) % 16 == 0);
    if (cols % 4 == 0 && aligned) {
        const int64_t n_vec = n / 4;
        const int blocks = (int)std::min<int64_t>((n_vec + threads - 1) / threads, 4096);
        bias_scale_leaky_vec4_kernel<<<blocks, threads, 0, stream>>>(yp, bp, n_vec, cols, mult, slope);
    } else {
        const int blocks = (int)std::min<int64_t>((n + threads - 1) / threads, 4096);
        bias_scale_leaky_kernel<<<blocks, threads, 0, stream>>>(yp, bp, n, cols, mult, slope);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

fused_ext = load_inline(
    name="kb_l2_012_gemm_multiply_leakyrelu__cublas_epilogue",
    cpp_sources=cpp_src,
    cuda_sources=cuda_src,
    functions=["linear_scale_leakyrelu"],
    extra_cuda_cflags=["-O3", "--use_fast_math"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, multiplier, negative_slope):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.multiplier = multiplier
        self.negative_slope = negative_slope

    def forward(self, x):
        return fused_ext.linear_scale_leakyrelu(
            x, self.gemm.weight, self.gemm.bias, float(self.multiplier), float(self.negative_slope))
