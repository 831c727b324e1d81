# corpus: problem=kb_l1_020_leaky_relu device=cuda expect=accepted policy=both
# style: a lambda closure in __init__ captures the extension function
# class: 1,2,4
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

leaky_cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime.h>

template <typename scalar_t>
__global__ void leaky_relu_kernel(const scalar_t* __restrict__ input, scalar_t* __restrict__ output,
                                  float slope, int64_t size) {
    int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t step = (int64_t)blockDim.x * gridDim.x;
    while (idx < size) {
        float v = static_cast<float>(input[idx]);
        output[idx] = static_cast<scalar_t>(v >= 0.0f ? v : v * slope);
        idx += step;
    }
}

torch::Tensor leaky_relu_cuda(torch::Tensor input, double negative_slope) {
    TORCH_CHECK(input.is_cuda(), "input must be on the GPU");
    auto x = input.contiguous();
    auto output = torch::empty_like(x);
    const int64_t size = x.numel();
    if (size == 0) return output;
    const int block_size = 512;
    const int64_t wanted = (size + block_size - 1) / block_size;
    const int num_blocks = (int)std::min<int64_t>(wanted, 1 << 20);
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    AT_DISPATCH_FLOATING_TYPES_AND_HALF(x.scalar_type(), "leaky_relu_cuda", ([&] {
        leaky_relu_kernel<scalar_t><<<num_blocks, block_size, 0, stream>>>(
            x.data_ptr<scalar_t>(), output.data_ptr<scalar_t>(), (float)negative_slope, size);
    }));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return output;
}
"""

leaky_cpp_source = """
torch::Tensor leaky_relu_cuda(torch::Tensor input, double negative_slope);
"""

leaky = load_inline(
    name="leaky_relu_ext",
    cpp_sources=leaky_cpp_source,
    cuda_sources=leaky_cuda_source,
    functions=['leaky_relu_cuda'],
    verbose=True,
    extra_cuda_cflags=["-O3", "--use_fast_math"],
)

class ModelNew(nn.Module):
    def __init__(self, negative_slope: float = 0.01):
        super().__init__()
        slope = negative_slope
        self.act = lambda t: leaky.leaky_relu_cuda(t, slope)

    def forward(self, x):
        return self.act(x)
