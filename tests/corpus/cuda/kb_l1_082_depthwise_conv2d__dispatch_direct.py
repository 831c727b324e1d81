# corpus: problem=kb_l1_082_depthwise_conv2d device=cuda expect=accepted policy=both
# style: AT_DISPATCH_FLOATING_TYPES, grid-stride, current stream
# class: 6
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

dw_cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime.h>

template <typename scalar_t>
__global__ void depthwise_conv2d_kernel(const scalar_t* __restrict__ x, const scalar_t* __restrict__ w,
                                        scalar_t* __restrict__ y, int C, int H, int W, int K, int OH, int OW,
                                        int stride, int padding, int64_t total) {
    for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += (int64_t)gridDim.x * blockDim.x) {
        const int ow = idx % OW;
        const int oh = (idx / OW) % OH;
        const int c = (idx / ((int64_t)OW * OH)) % C;
        const int64_t n = idx / ((int64_t)OW * OH * C);
        const scalar_t* xp = x + (n * C + c) * (int64_t)H * W;
        const scalar_t* wp = w + (int64_t)c * K * K;
        scalar_t acc = 0;
        for (int kh = 0; kh < K; ++kh) {
            const int ih = oh * stride - padding + kh;
            if (ih < 0 || ih >= H) continue;
            for (int kw = 0; kw < K; ++kw) {
                const int iw = ow * stride - padding + kw;
                if (iw >= 0 && iw < W) acc += xp[(int64_t)ih * W + iw] * wp[kh * K + kw];
            }
        }
        y[idx] = acc;
    }
}

torch::Tensor depthwise_conv2d_cuda(torch::Tensor x, torch::Tensor w, int stride, int padding) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    x = x.contiguous();
    w = w.contiguous();
    const int N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3), K = w.size(2);
    const int OH = (H + 2 * padding - K) / stride + 1, OW = (W + 2 * padding - K) / stride + 1;
    auto y = torch::empty({N, C, OH, OW}, x.options());
    const int64_t total = y.numel();
    const int threads = 256;
    const int blocks = (int)std::min<int64_t>((total + threads - 1) / threads, 132 * 32);
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "depthwise_conv2d_cuda", [&] {
        depthwise_conv2d_kernel<scalar_t><<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
            x.data_ptr<scalar_t>(), w.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), C, H, W, K, OH, OW, stride,
            padding, total);
    });
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

dw_cpp_source = """
torch::Tensor depthwise_conv2d_cuda(torch::Tensor x, torch::Tensor w, int stride, int padding);
"""

dw = load_inline(
    name="depthwise_conv2d_ext",
    cpp_sources=dw_cpp_source,
    cuda_sources=dw_cuda_source,
    functions=['depthwise_conv2d_cuda'],
    verbose=True,
    extra_cuda_cflags=["-O3", "--use_fast_math"],
)

class ModelNew(nn.Module):
    def __init__(self, in_channels: int, kernel_size: int, stride: int = 1, padding: int = 0, bias: bool = False):
        super().__init__()
        self.conv2d = nn.Conv2d(in_channels, in_channels, kernel_size, stride=stride, padding=padding,
                                groups=in_channels, bias=bias)
        self.stride = stride
        self.padding = padding

    def forward(self, x):
        return dw.depthwise_conv2d_cuda(x, self.conv2d.weight, self.stride, self.padding)
