# corpus: problem=kb_l1_063_conv_standard_2d device=cuda expect=accepted policy=both
# style: direct convolution, filter staged in dynamic shared memory, 3D grid, 8.5 GiB output, int64 offsets
# class: 4,6
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
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1, padding: int = 0,
                 dilation: int = 1, groups: int = 1, bias: bool = False):
        super().__init__()
        assert dilation == 1 and groups == 1 and not bias
        self.conv2d = nn.Conv2d(in_channels, out_channels, (kernel_size, kernel_size), stride=stride,
                                padding=padding, bias=False)
        self.stride = stride
        self.padding = padding

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return conv.conv2d_forward(x, self.conv2d.weight, self.stride, self.padding)
