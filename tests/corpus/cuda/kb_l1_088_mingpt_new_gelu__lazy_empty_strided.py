# corpus: problem=kb_l1_088_mingpt_new_gelu device=cuda expect=accepted policy=both
# style: _ext = None lazy loader; torch.empty_strided; kernel templated on BLOCK with a switch; float4 + tail; CHECK_* macros; cudaGetLastError
# class: 2
import math

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

#define CHECK_CUDA(x) TORCH_CHECK((x).is_cuda(), #x " must be a CUDA tensor")
#define CHECK_CONTIG(x) TORCH_CHECK((x).is_contiguous(), #x " must be contiguous")
#define CHECK_F32(x) TORCH_CHECK((x).scalar_type() == at::kFloat, #x " must be float32")

__device__ __forceinline__ float new_gelu(float x) {
    // 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
    const float k0 = 0.7978845608028654f;  // sqrt(2/pi)
    const float inner = k0 * (x + 0.044715f * (x * x * x));
    return 0.5f * x * (1.0f + tanhf(inner));
}

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
new_gelu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    const int64_t n4 = n >> 2;
    const float4* __restrict__ x4 = reinterpret_cast<const float4*>(x);
    float4* __restrict__ y4 = reinterpret_cast<float4*>(y);
    const int64_t tid = (int64_t)blockIdx.x * BLOCK + threadIdx.x;
    const int64_t step = (int64_t)gridDim.x * BLOCK;
    for (int64_t i = tid; i < n4; i += step) {
        float4 v = __ldg(x4 + i);
        v.x = new_gelu(v.x);
        v.y = new_gelu(v.y);
        v.z = new_gelu(v.z);
        v.w = new_gelu(v.w);
        y4[i] = v;
    }
    for (int64_t i = (n4 << 2) + tid; i < n; i += step) y[i] = new_gelu(x[i]);
}

template <int BLOCK>
static void launch(const float* x, float* y, int64_t n, cudaStream_t stream) {
    const int64_t want = ((n + 3) / 4 + BLOCK - 1) / BLOCK;
    const int64_t cap = (int64_t)at::cuda::getCurrentDeviceProperties()->multiProcessorCount * 32;
    const int grid = (int)std::max<int64_t>(1, std::min(want, cap));
    new_gelu_kernel<BLOCK><<<grid, BLOCK, 0, stream>>>(x, y, n);
}

void new_gelu_out(torch::Tensor x, torch::Tensor out, int64_t block) {
    CHECK_CUDA(x); CHECK_CUDA(out);
    CHECK_CONTIG(x); CHECK_CONTIG(out);
    CHECK_F32(x); CHECK_F32(out);
    TORCH_CHECK(x.numel() == out.numel(), "size mismatch");
    TORCH_CHECK(reinterpret_cast<uintptr_t>(x.data_ptr()) % 16 == 0 &&
                reinterpret_cast<uintptr_t>(out.data_ptr()) % 16 == 0, "16-byte aligned buffers expected");
    const int64_t n = x.numel();
    if (n == 0) return;
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    switch (block) {
        case 128: launch<128>(x.data_ptr<float>(), out.data_ptr<float>(), n, stream); break;
        case 512: launch<512>(x.data_ptr<float>(), out.data_ptr<float>(), n, stream); break;
        default:  launch<256>(x.data_ptr<float>(), out.data_ptr<float>(), n, stream); break;
    }
    cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "new_gelu_kernel launch failed: ", cudaGetErrorString(err));
}
"""

_ext = None


def _get_ext():
    global _ext
    if _ext is None:
        _ext = load_inline(
            name="mingpt_new_gelu_cuda",
            cpp_sources="void new_gelu_out(torch::Tensor x, torch::Tensor out, int64_t block);",
            cuda_sources=_SRC,
            functions=["new_gelu_out"],
            extra_cuda_cflags=["-O3"],
        )
    return _ext


class ModelNew(nn.Module):
    BLOCK = 256

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        out = torch.empty_strided(x.size(), x.stride(), dtype=x.dtype, device=x.device)
        _get_ext().new_gelu_out(x, out, self.BLOCK)
        return out
