# corpus: problem=kb_l1_021_sigmoid device=cuda expect=accepted policy=both
# style: TORCH_LIBRARY/TORCH_LIBRARY_IMPL called as torch.ops.<ns>.<op>, inline PTX ex2.approx, AT_DISPATCH_FLOATING_TYPES_AND_HALF template, unrolled grid-stride loop
# class: 2
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

batch_size = 4096
dim = 393216

# Registered as a real dispatcher op (torch.ops.kb_sigmoid.sigmoid) via TORCH_LIBRARY.
# exp() is done with the hardware ex2 unit through inline PTX.
sigmoid_cuda_source = r"""
#include <torch/extension.h>
#include <torch/library.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <ATen/Dispatch.h>

__device__ __forceinline__ float ptx_exp2(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

__device__ __forceinline__ float sigmoid_f32(float x) {
    // 1 / (1 + e^-x) == 1 / (1 + 2^(-x * log2(e)))
    const float e = ptx_exp2(-x * 1.4426950408889634f);
    return 1.0f / (1.0f + e);
}

template <typename scalar_t>
__global__ void __launch_bounds__(256)
sigmoid_kernel(const scalar_t* __restrict__ in, scalar_t* __restrict__ out, int64_t n) {
    const int64_t stride = (int64_t)blockDim.x * gridDim.x;
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    // 4-way unrolled grid-stride loop
    for (; i + 3 * stride < n; i += 4 * stride) {
        float a = static_cast<float>(in[i]);
        float b = static_cast<float>(in[i + stride]);
        float c = static_cast<float>(in[i + 2 * stride]);
        float d = static_cast<float>(in[i + 3 * stride]);
        out[i]              = static_cast<scalar_t>(sigmoid_f32(a));
        out[i + stride]     = static_cast<scalar_t>(sigmoid_f32(b));
        out[i + 2 * stride] = static_cast<scalar_t>(sigmoid_f32(c));
        out[i + 3 * stride] = static_cast<scalar_t>(sigmoid_f32(d));
    }
    for (; i < n; i += stride) {
        out[i] = static_cast<scalar_t>(sigmoid_f32(static_cast<float>(in[i])));
    }
}

at::Tensor sigmoid_cuda(const at::Tensor& x) {
    TORCH_CHECK(x.is_cuda(), "sigmoid_cuda: expected a CUDA tensor");
    const c10::cuda::CUDAGuard guard(x.device());
    auto xc = x.contiguous();
    auto out = at::empty_like(xc);
    const int64_t n = xc.numel();
    if (n == 0) return out;

    const int threads = 256;
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, xc.get_device());
    int64_t blocks = (n + threads - 1) / threads;
    const int64_t max_blocks = (int64_t)sms * 32;
    if (blocks > max_blocks) blocks = max_blocks;

    auto stream = c10::cuda::getCurrentCUDAStream();
    AT_DISPATCH_FLOATING_TYPES_AND_HALF(xc.scalar_type(), "sigmoid_cuda", [&] {
        sigmoid_kernel<scalar_t><<<(unsigned)blocks, threads, 0, stream>>>(
            xc.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(), n);
    });
    cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "sigmoid_kernel launch failed: ", cudaGetErrorString(err));
    return out;
}

TORCH_LIBRARY(kb_sigmoid, m) {
    m.def("sigmoid(Tensor x) -> Tensor");
}

TORCH_LIBRARY_IMPL(kb_sigmoid, CUDA, m) {
    m.impl("sigmoid", &sigmoid_cuda);
}
"""

load_inline(
    name="kb_sigmoid_ext",
    cpp_sources="",
    cuda_sources=sigmoid_cuda_source,
    is_python_module=False,
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.ops.kb_sigmoid.sigmoid(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
