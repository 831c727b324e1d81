# corpus: problem=kb_l1_063_conv_standard_2d device=cuda expect=accepted policy=both
# style: extra_include_paths from os.path.join(CUDA_HOME or '/usr/local/cuda', 'include'); c10::optional bias; stride/padding/dilation; extern __shared__ + cudaFuncSetAttribute; nn.Conv2d kept for its weights; 3-D dim3 grid
# class: 6
import os

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline, CUDA_HOME

conv_src = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

// Output tile per block: TILE_W x TILE_H pixels (one per thread) x OC_BLOCK output channels.
constexpr int TILE_W = 32;
constexpr int TILE_H = 8;
constexpr int OC_BLOCK = 16;
constexpr int THREADS = TILE_W * TILE_H;

__global__ void __launch_bounds__(THREADS)
conv2d_direct_kernel(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ bias,
                     float* __restrict__ y,
                     int C, int H, int W, int OC, int K, int OH, int OW,
                     int stride, int pad, int dil, int tiles_w) {
    extern __shared__ float smem[];
    const int in_tw = (TILE_W - 1) * stride + (K - 1) * dil + 1;
    const int in_th = (TILE_H - 1) * stride + (K - 1) * dil + 1;
    float* s_in = smem;                    // [in_th][in_tw]  one input channel halo tile
    float* s_w  = smem + in_th * in_tw;    // [OC_BLOCK][K*K] weights of this channel slice

    const int n   = blockIdx.z;
    const int oc0 = blockIdx.y * OC_BLOCK;
    const int oh0 = (blockIdx.x / tiles_w) * TILE_H;
    const int ow0 = (blockIdx.x % tiles_w) * TILE_W;
    const int tx = threadIdx.x % TILE_W;
    const int ty = threadIdx.x / TILE_W;
    const int ih0 = oh0 * stride - pad;
    const int iw0 = ow0 * stride - pad;
    const int KK = K * K;

    float acc[OC_BLOCK];
#pragma unroll
    for (int o = 0; o < OC_BLOCK; ++o) acc[o] = 0.f;

    for (int c = 0; c < C; ++c) {
        const float* xc = x + ((size_t)n * C + c) * H * W;
        for (int i = threadIdx.x; i < in_th * in_tw; i += THREADS) {
            const int r = i / in_tw, q = i - r * in_tw;
            const int ih = ih0 + r, iw = iw0 + q;
            s_in[i] = (ih >= 0 && ih < H && iw >= 0 && iw < W) ? __ldg(xc + (size_t)ih * W + iw) : 0.f;
        }
        for (int i = threadIdx.x; i < OC_BLOCK * KK; i += THREADS) {
            const int o = i / KK, kk = i - o * KK;
            s_w[i] = (oc0 + o < OC) ? __ldg(w + ((size_t)(oc0 + o) * C + c) * KK + kk) : 0.f;
        }
        __syncthreads();

        for (int kh = 0; kh < K; ++kh) {
            const float* row = s_in + (ty * stride + kh * dil) * in_tw + tx * stride;
            for (int kw = 0; kw < K; ++kw) {
                const float v = row[kw * dil];
                const float* wp = s_w + kh * K + kw;
#pragma unroll
                for (int o = 0; o < OC_BLOCK; ++o) acc[o] = fmaf(v, wp[o * KK], acc[o]);
            }
        }
        __syncthreads();
    }

    const int oh = oh0 + ty, ow = ow0 + tx;
    if (oh < OH && ow < OW) {
#pragma unroll
        for (int o = 0; o < OC_BLOCK; ++o) {
            const int oc = oc0 + o;
            if (oc < OC) {
                float v = acc[o];
                if (bias != nullptr) v += __ldg(bias + oc);
                y[(((size_t)n * OC + oc) * OH + oh) * OW + ow] = v;
            }
        }
    }
}

torch::Tensor conv2d_forward(torch::Tensor x, torch::Tensor weight, c10::optional<torch::Tensor> bias,
                             int64_t stride, int64_t padding, int64_t dilation) {
    TORCH_CHECK(x.is_cuda() && weight.is_cuda(), "conv2d_forward: CUDA tensors expected");
    TORCH_CHECK(x.scalar_type() == at::kFloat && weight.scalar_type() == at::kFloat, "conv2d_forward: float32 only");
    TORCH_CHECK(x.dim() == 4 && weight.dim() == 4, "conv2d_forward: NCHW input and OIHW weight expected");
    TORCH_CHECK(weight.size(2) == weight.size(3), "conv2d_forward: square kernels only");
    TORCH_CHECK(weight.size(1) == x.size(1), "conv2d_forward: groups != 1 is not supported");
    c10::cuda::CUDAGuard guard(x.device());

    auto xc = x.contiguous();
    auto wc = weight.contiguous();
    const int N = xc.size(0), C = xc.size(1), H = xc.size(2), W = xc.size(3);
    const int OC = wc.size(0), K = wc.size(2);
    const int OH = (H + 2 * padding - dilation * (K - 1) - 1) / stride + 1;
    const int OW = (W + 2 * padding - dilation * (K - 1) - 1) / stride + 1;
    TORCH_CHECK(OH > 0 && OW > 0, "conv2d_forward: output would be empty");

    auto y = torch::empty({N, OC, OH, OW}, xc.options());
    const float* bptr = nullptr;
    torch::Tensor bc;
    if (bias.has_value() && bias->defined()) {
        bc = bias->contiguous();
        bptr = bc.data_ptr<float>();
    }

    const int tiles_w = (OW + TILE_W - 1) / TILE_W;
    const int tiles_h = (OH + TILE_H - 1) / TILE_H;
    dim3 grid(tiles_w * tiles_h, (OC + OC_BLOCK - 1) / OC_BLOCK, N);
    const int in_tw = (TILE_W - 1) * stride + (K - 1) * dilation + 1;
    const int in_th = (TILE_H - 1) * stride + (K - 1) * dilation + 1;
    const size_t smem = sizeof(float) * ((size_t)in_th * in_tw + (size_t)OC_BLOCK * K * K);
    if (smem > 48 * 1024) {
        C10_CUDA_CHECK(cudaFuncSetAttribute(conv2d_direct_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    }
    conv2d_direct_kernel<<<grid, THREADS, smem, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), wc.data_ptr<float>(), bptr, y.data_ptr<float>(),
        C, H, W, OC, K, OH, OW, (int)stride, (int)padding, (int)dilation, tiles_w);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

conv_cpp = """
torch::Tensor conv2d_forward(torch::Tensor x, torch::Tensor weight, c10::optional<torch::Tensor> bias,
                             int64_t stride, int64_t padding, int64_t dilation);
"""

conv_ext = load_inline(
    name="direct_conv2d_ext",
    cpp_sources=conv_cpp,
    cuda_sources=conv_src,
    functions=["conv2d_forward"],
    extra_include_paths=[os.path.join(CUDA_HOME or "/usr/local/cuda", "include")],
    extra_cuda_cflags=["-O3", "--use_fast_math"],
)


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1, padding: int = 0,
                 dilation: int = 1, groups: int = 1, bias: bool = False):
        super().__init__()
        if groups != 1:
            raise NotImplementedError("only groups=1 is implemented")
        # Same module (and therefore same parameter init / names) as the reference.
        self.conv2d = nn.Conv2d(in_channels, out_channels, (kernel_size, kernel_size), stride=stride,
                                padding=padding, dilation=dilation, groups=groups, bias=bias)
        self.stride, self.padding, self.dilation = stride, padding, dilation

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return conv_ext.conv2d_forward(x, self.conv2d.weight, self.conv2d.bias,
                                       self.stride, self.padding, self.dilation)
