# corpus: problem=kb_l1_063_conv_standard_2d device=cuda expect=accepted policy=both
# style: self.op alias, stride/padding read from the module
# class: 1,4,6
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

conv_cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

#define BLOCK 16

// Direct convolution: blockIdx.z = n * OC + oc; a 16x16 tile of output pixels per block; the filter of `oc`
// (IC * KH * KW floats) is staged in shared memory once per block.
__global__ void conv2d_direct_kernel(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y,
                                     int IC, int H, int W, int OC, int KH, int KW, int OH, int OW, int stride, int pad) {
    extern __shared__ float filt[];
    const int n = blockIdx.z / OC, oc = blockIdx.z % OC;
    const int fsize = IC * KH * KW;
    const int tid = threadIdx.y * BLOCK + threadIdx.x;
    for (int i = tid; i < fsize; i += BLOCK * BLOCK) filt[i] = w[(int64_t)oc * fsize + i];
    __syncthreads();
    const int oh = blockIdx.y * BLOCK + threadIdx.y, ow = blockIdx.x * BLOCK + threadIdx.x;
    if (oh >= OH || ow >= OW) return;
    float acc = 0.0f;
    for (int ic = 0; ic < IC; ++ic) {
        const float* plane = x + ((int64_t)n * IC + ic) * H * W;
        for (int kh = 0; kh < KH; ++kh) {
            const int ih = oh * stride - pad + kh;
            if (ih < 0 || ih >= H) continue;
            for (int kw = 0; kw < KW; ++kw) {
                const int iw = ow * stride - pad + kw;
                if (iw < 0 || iw >= W) continue;
                acc += plane[(int64_t)ih * W + iw] * filt[(ic * KH + kh) * KW + kw];
            }
        }
    }
    y[(((int64_t)n * OC + oc) * OH + oh) * OW + ow] = acc;
}

torch::Tensor conv2d_forward(torch::Tensor input, torch::Tensor weight, int64_t stride, int64_t padding) {
    TORCH_CHECK(input.is_cuda() && weight.is_cuda(), "CUDA tensors expected");
    TORCH_CHECK(input.dim() == 4 && weight.dim() == 4 && weight.size(1) == input.size(1), "NCHW input, OIHW weight");
    auto x = input.contiguous();
    auto w = weight.contiguous();
    const int N = x.size(0), IC = x.size(1), H = x.size(2), W = x.size(3);
    const int OC = w.size(0), KH = w.size(2), KW = w.size(3);
    const int OH = (H + 2 * padding - KH) / stride + 1, OW = (W + 2 * padding - KW) / stride + 1;
    auto y = torch::empty({N, OC, OH, OW}, x.options());
    const size_t smem = sizeof(float) * IC * KH * KW;
    TORCH_CHECK(smem <= 48 * 1024, "filter too large for shared memory");
    TORCH_CHECK((int64_t)N * OC <= 65535, "N * OC exceeds the grid's z limit");
    dim3 block(BLOCK, BLOCK);
    dim3 grid((OW + BLOCK - 1) / BLOCK, (OH + BLOCK - 1) / BLOCK, N * OC);
    conv2d_direct_kernel<<<grid, block, smem>>>(x.data_ptr<float>(), w.data_ptr<float>(), y.data_ptr<float>(),
                                                IC, H, W, OC, KH, KW, OH, OW, (int)stride, (int)padding);
    cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "conv2d_direct_kernel: ", cudaGetErrorString(err));
    return y;
}
"""

conv_cpp_source = """
torch::Tensor conv2d_forward(torch::Tensor input, torch::Tensor weight, int64_t stride, int64_t padding);
"""

conv = load_inline(
    name="conv2d_direct_ext",
    cpp_sources=conv_cpp_source,
    cuda_sources=conv_cuda_source,
    functions=['conv2d_forward'],
    verbose=True,
    extra_cuda_cflags=["-O3", "--use_fast_math"],
)

class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=False):
        super().__init__()
        self.conv2d = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, bias=bias)
        self.conv_fn = conv.conv2d_forward

    def forward(self, x):
        s = self.conv2d.stride[0]
        p = self.conv2d.padding[0]
        return self.conv_fn(x, self.conv2d.weight, s, p)
