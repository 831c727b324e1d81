# corpus: problem=kb_l2_001_conv2d_relu_biasadd device=cuda expect=accepted policy=kernelbench
# style: convolution by cuDNN, fused ReLU + channel bias in place, one thread per element (1M blocks)
# class: 6
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

conv_epi_cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

// y = relu(y) + bias[c], in place on the convolution's output (N, C, H, W); bias is (C, 1, 1).
__global__ void relu_bias_kernel(float* __restrict__ y, const float* __restrict__ bias, int C, int64_t HW, int64_t n) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const int c = (int)((i / HW) % C);
        y[i] = fmaxf(y[i], 0.0f) + bias[c];
    }
}

torch::Tensor relu_bias_add_(torch::Tensor y, torch::Tensor bias) {
    TORCH_CHECK(y.is_cuda() && y.is_contiguous() && y.dim() == 4, "contiguous NCHW CUDA tensor");
    TORCH_CHECK(bias.numel() == y.size(1), "one bias per channel");
    const int64_t n = y.numel();
    const int64_t HW = y.size(2) * y.size(3);
    const int threads = 256;
    const int64_t blocks = (n + threads - 1) / threads;
    relu_bias_kernel<<<(unsigned int)blocks, threads>>>(y.data_ptr<float>(), bias.contiguous().data_ptr<float>(),
                                                       (int)y.size(1), HW, n);
    cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "relu_bias_kernel: ", cudaGetErrorString(err));
    return y;
}
"""

conv_epi_cpp_source = """
torch::Tensor relu_bias_add_(torch::Tensor y, torch::Tensor bias);
"""

conv_epi = load_inline(
    name="relu_channel_bias_ext",
    cpp_sources=conv_epi_cpp_source,
    cuda_sources=conv_epi_cuda_source,
    functions=['relu_bias_add_'],
    verbose=True,
    extra_cuda_cflags=["-O3", "--use_fast_math"],
)

class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        x = self.conv(x)
        return conv_epi.relu_bias_add_(x, self.bias)
