# corpus: problem=kb_l2_086_matmul_divide_gelu device=cuda expect=accepted policy=kernelbench
# style: F.linear (cuBLAS), then a float4 divide+GELU kernel in a torch.autograd.Function with ctx.save_for_backward
# class: 3,6
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

# GEMM stays on cuBLAS (F.linear); the "/ divisor -> exact GELU" epilogue is one fused
# float4-vectorised grid-stride kernel. A torch.autograd.Function wraps it so the module
# still trains (backward of the epilogue written out analytically).

epilogue_cuda = r"""
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

__device__ __forceinline__ float div_gelu(float v, float divisor) {
    const float u = v / divisor;
    return 0.5f * u * (1.0f + erff(u * 0.70710678118654752440f));
}

__global__ void div_gelu_vec4_kernel(const float4* __restrict__ in, float4* __restrict__ out,
                                     int64_t n_vec, float divisor) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n_vec;
         i += (int64_t)blockDim.x * gridDim.x) {
        float4 v = in[i];
        v.x = div_gelu(v.x, divisor);
        v.y = div_gelu(v.y, divisor);
        v.z = div_gelu(v.z, divisor);
        v.w = div_gelu(v.w, divisor);
        out[i] = v;
    }
}

__global__ void div_gelu_scalar_kernel(const float* __restrict__ in, float* __restrict__ out,
                                       int64_t start, int64_t n, float divisor) {
    for (int64_t i = start + (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)blockDim.x * gridDim.x) {
        out[i] = div_gelu(in[i], divisor);
    }
}

torch::Tensor div_gelu_forward(torch::Tensor z, double divisor) {
    TORCH_CHECK(z.is_cuda(), "z must be a CUDA tensor");
    TORCH_CHECK(z.scalar_type() == at::kFloat, "z must be float32");
    const c10::cuda::CUDAGuard guard(z.device());
    z = z.contiguous();
    auto out = torch::empty_like(z);
    const int64_t n = z.numel();
    if (n == 0) return out;

    const float d = (float)divisor;
    const int threads = 256;
    const int max_blocks = at::cuda::getCurrentDeviceProperties()->multiProcessorCount * 8;
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();

    const float* zp = z.data_ptr<float>();
    float* op = out.data_ptr<float>();
    const bool aligned = (reinterpret_cast<uintptr_t>(zp) % 16 == 0) &&
                         (reinterpret_cast<uintptr_t>(op) % 16 == 0);
    int64_t done = 0;
    if (aligned) {
        const int64_t n_vec = n / 4;
        if (n_vec > 0) {
            const int blocks = (int)std::min<int64_t>((n_vec + threads - 1) / threads, max_blocks);
            div_gelu_vec4_kernel<<<blocks, threads, 0, stream>>>(
                reinterpret_cast<const float4*>(zp), reinterpret_cast<float4*>(op), n_vec, d);
            C10_CUDA_KERNEL_LAUNCH_CHECK();
        }
        done = n_vec * 4;
    }
    if (done < n) {   // tail (or everything, if the pointers are not 16-byte aligned)
        const int64_t rest = n - done;
        const int blocks = (int)std::min<int64_t>((rest + threads - 1) / threads, max_blocks);
        div_gelu_scalar_kernel<<<blocks, threads, 0, stream>>>(zp, op, done, n, d);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    return out;
}
"""

epilogue_cpp = "torch::Tensor div_gelu_forward(torch::Tensor z, double divisor);"

_epilogue = load_inline(
    name="kb_l2_086_matmul_divide_gelu__autograd",
    cpp_sources=epilogue_cpp,
    cuda_sources=epilogue_cuda,
    functions=["div_gelu_forward"],
    extra_cuda_cflags=["-O3", "--use_fast_math"],
    verbose=False,
)


class DivGELUFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, z, divisor):
        ctx.save_for_backward(z)
        ctx.divisor = divisor
        return _epilogue.div_gelu_forward(z, float(divisor))

    @staticmethod
    def backward(ctx, grad_out):
        (z,) = ctx.saved_tensors
        d = ctx.divisor
        u = z / d
        cdf = 0.5 * (1.0 + torch.erf(u * (1.0 / math.sqrt(2.0))))
        pdf = torch.exp(-0.5 * u * u) * (1.0 / math.sqrt(2.0 * math.pi))
        return grad_out * (cdf + u * pdf) / d, None


class ModelNew(nn.Module):
    def __init__(self, input_size, output_size, divisor):
        super().__init__()
        self.linear = nn.Linear(input_size, output_size)
        self.divisor = divisor

    def forward(self, x):
        z = F.linear(x, self.linear.weight, self.linear.bias)   # cuBLAS GEMM + bias
        return DivGELUFunction.apply(z, self.divisor)
