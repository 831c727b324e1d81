# corpus: problem=kb_l1_005_matrix_scalar_mult device=cuda expect=accepted policy=both
# style: terse; self.op = ext.op; float4 + __ldg grid-stride; half/bf16 dispatch with opmath; current stream; -O3 --use_fast_math
# class: 1
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/OpMathType.h>

template <typename T>
__global__ void scale_kernel(const T* __restrict__ a, T* __restrict__ out, at::opmath_type<T> s, int64_t n) {
    using acc_t = at::opmath_type<T>;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        out[i] = static_cast<T>(static_cast<acc_t>(a[i]) * s);
}

__global__ void scale_kernel_f4(const float4* __restrict__ a, float4* __restrict__ out, float s, int64_t n4) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n4; i += (int64_t)gridDim.x * blockDim.x) {
        float4 v = __ldg(a + i);
        v.x *= s; v.y *= s; v.z *= s; v.w *= s;
        out[i] = v;
    }
}

torch::Tensor scalar_mul(torch::Tensor A, double s) {
    TORCH_CHECK(A.is_cuda(), "A must be a CUDA tensor");
    auto a = A.contiguous();
    auto out = torch::empty_like(a);
    const int64_t n = a.numel();
    if (n == 0) return out;
    auto stream = at::cuda::getCurrentCUDAStream();
    const int threads = 256;
    const int64_t max_blocks = (int64_t)at::cuda::getCurrentDeviceProperties()->multiProcessorCount * 16;
    if (a.scalar_type() == at::kFloat && n % 4 == 0 &&
        reinterpret_cast<uintptr_t>(a.data_ptr()) % 16 == 0 && reinterpret_cast<uintptr_t>(out.data_ptr()) % 16 == 0) {
        const int64_t n4 = n / 4;
        const int blocks = (int)std::min<int64_t>((n4 + threads - 1) / threads, max_blocks);
        scale_kernel_f4<<<blocks, threads, 0, stream>>>(
            reinterpret_cast<const float4*>(a.data_ptr<float>()), reinterpret_cast<float4*>(out.data_ptr<float>()),
            (float)s, n4);
    } else {
        const int blocks = (int)std::min<int64_t>((n + threads - 1) / threads, max_blocks);
        AT_DISPATCH_FLOATING_TYPES_AND2(at::ScalarType::Half, at::ScalarType::BFloat16, a.scalar_type(), "scalar_mul", [&] {
            scale_kernel<scalar_t><<<blocks, threads, 0, stream>>>(
                a.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(), static_cast<at::opmath_type<scalar_t>>(s), n);
        });
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

ext = load_inline(
    name="scalar_mul_ext",
    cpp_sources="torch::Tensor scalar_mul(torch::Tensor A, double s);",
    cuda_sources=cuda_src,
    functions=["scalar_mul"],
    extra_cuda_cflags=["-O3", "--use_fast_math"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.op = ext.scalar_mul

    def forward(self, A: torch.Tensor, s: float) -> torch.Tensor:
        return self.op(A, float(s))
