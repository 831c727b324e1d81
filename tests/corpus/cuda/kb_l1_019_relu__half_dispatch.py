# corpus: problem=kb_l1_019_relu device=cuda expect=accepted policy=both
# style: AT_DISPATCH_FLOATING_TYPES_AND_HALF over a templated grid-stride kernel
# class: 6
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <algorithm>

template <typename scalar_t>
__global__ void relu_kernel(const scalar_t* __restrict__ x, scalar_t* __restrict__ y, int64_t n) {
    const int64_t stride = (int64_t)blockDim.x * gridDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const scalar_t v = x[i];
        const float f = static_cast<float>(v);
        // keep NaNs like torch.relu does, clamp everything else at zero
        y[i] = (f > 0.0f || isnan(f)) ? v : static_cast<scalar_t>(0);
    }
}

torch::Tensor relu_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    auto input = x.contiguous();
    auto output = torch::empty_like(input);
    const int64_t n = input.numel();
    if (n == 0) {
        return output;
    }

    const int threads = 256;
    const int64_t blocks = std::min<int64_t>((n + threads - 1) / threads, 65535);

    AT_DISPATCH_FLOATING_TYPES_AND_HALF(input.scalar_type(), "relu_forward", ([&] {
        relu_kernel<scalar_t><<<blocks, threads>>>(
            input.data_ptr<scalar_t>(), output.data_ptr<scalar_t>(), n);
    }));

    cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "relu_kernel launch failed: ", cudaGetErrorString(err));
    return output;
}
"""

relu_cpp = "torch::Tensor relu_forward(torch::Tensor x);"

relu_ext = load_inline(
    name="kb_l1_019_relu__half_dispatch",
    cpp_sources=relu_cpp,
    cuda_sources=relu_source,
    functions=["relu_forward"],
    extra_cuda_cflags=["-O3", "--use_fast_math"],
    verbose=False,
)


class CudaReLU(nn.Module):
    """ReLU backed by the custom kernel (float32, float64 and float16)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return relu_ext.relu_forward(x)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.relu = CudaReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.relu(x)
