# corpus: problem=kb_l1_082_depthwise_conv2d device=cuda expect=accepted policy=both
# style: filters in __constant__ memory with a global-memory fallback
# class: 6
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Depthwise conv2d. The filter bank (C * KH * KW floats) is small, so it is staged in
# __constant__ memory: all threads of a warp work on the same channel and read the same
# tap, which the constant cache broadcasts. Filters that do not fit fall back to a
# global-memory (__ldg) variant of the same kernel.

cuda_src = r"""
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#define MAX_CONST_WEIGHTS 8192   // 32 KB of the 64 KB constant bank

__constant__ float c_weight[MAX_CONST_WEIGHTS];

template <bool USE_CONST>
__global__ void depthwise_conv2d_kernel(const float* __restrict__ x,
                                        const float* __restrict__ w_global,
                                        const float* __restrict__ bias,
                                        float* __restrict__ y,
                                        int N, int C, int H, int W,
                                        int KH, int KW, int OH, int OW,
                                        int sh, int sw, int ph, int pw) {
    const int64_t total = (int64_t)N * C * OH * OW;
    for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < total;
         idx += (int64_t)blockDim.x * gridDim.x) {
        const int ow = (int)(idx % OW);
        const int oh = (int)((idx / OW) % OH);
        const int64_t nc = idx / ((int64_t)OW * OH);
        const int c = (int)(nc % C);

        const float* xp = x + nc * H * W;
        const int wbase = c * KH * KW;
        const int ih0 = oh * sh - ph;
        const int iw0 = ow * sw - pw;

        float acc = 0.0f;
        for (int kh = 0; kh < KH; ++kh) {
            const int ih = ih0 + kh;
            if (ih < 0 || ih >= H) continue;
            for (int kw = 0; kw < KW; ++kw) {
                const int iw = iw0 + kw;
                if (iw < 0 || iw >= W) continue;
                const float wv = USE_CONST ? c_weight[wbase + kh * KW + kw]
                                           : __ldg(w_global + wbase + kh * KW + kw);
                acc = fmaf(__ldg(xp + (int64_t)ih * W + iw), wv, acc);
            }
        }
        if (bias != nullptr) acc += bias[c];
        y[idx] = acc;
    }
}

torch::Tensor depthwise_conv2d_forward(torch::Tensor x, torch::Tensor weight,
                                       c10::optional<torch::Tensor> bias,
                                       int64_t stride_h, int64_t stride_w,
                                       int64_t pad_h, int64_t pad_w) {
    TORCH_CHECK(x.is_cuda() && weight.is_cuda(), "inputs must be CUDA tensors");
    TORCH_CHECK(x.dim() == 4, "x must be NCHW");
    TORCH_CHECK(weight.dim() == 4 && weight.size(1) == 1, "weight must be (C, 1, KH, KW)");
    TORCH_CHECK(x.scalar_type() == at::kFloat && weight.scalar_type() == at::kFloat, "float32 only");
    TORCH_CHECK(weight.size(0) == x.size(1), "depthwise: one filter per input channel expected");

    const c10::cuda::CUDAGuard guard(x.device());
    x = x.contiguous();
    auto w = weight.contiguous();
    const int N = (int)x.size(0), C = (int)x.size(1), H = (int)x.size(2), W = (int)x.size(3);
    const int KH = (int)w.size(2), KW = (int)w.size(3);
    const int OH = (int)((H + 2 * pad_h - KH) / stride_h + 1);
    const int OW = (int)((W + 2 * pad_w - KW) / stride_w + 1);
    TORCH_CHECK(OH > 0 && OW > 0, "output would be empty");

    const float* bptr = nullptr;
    torch::Tensor b;
    if (bias.has_value() && bias->defined()) { b = bias->contiguous(); bptr = b.data_ptr<float>(); }

    auto y = torch::empty({N, C, OH, OW}, x.options());
    const int64_t total = y.numel();
    if (total == 0) return y;

    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    const int threads = 256;
    const int64_t blocks64 = (total + threads - 1) / threads;
    const int blocks = (int)std::min<int64_t>(blocks64, 65535LL * 16);

    const bool fits = w.numel() <= MAX_CONST_WEIGHTS;
    if (fits) {
        // stream-ordered copy: earlier launches that read c_weight finish first
        C10_CUDA_CHECK(cudaMemcpyToSymbolAsync(c_weight, w.data_ptr<float>(), w.numel() * sizeof(float),
                                               0, cudaMemcpyDeviceToDevice, stream));
        depthwise_conv2d_kernel<true><<<blocks, threads, 0, stream>>>(
            x.data_ptr<float>(), nullptr, bptr, y.data_ptr<float>(),
            N, C, H, W, KH, KW, OH, OW, (int)stride_h, (int)stride_w, (int)pad_h, (int)pad_w);
    } else {
        depthwise_conv2d_kernel<false><<<blocks, threads, 0, stream>>>(
            x.data_ptr<float>(), w.data_ptr<float>(), bptr, y.data_ptr<float>(),
            N, C, H, W, KH, KW, OH, OW, (int)stride_h, (int)stride_w, (int)pad_h, (int)pad_w);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_src = """
torch::Tensor depthwise_conv2d_forward(torch::Tensor x, torch::Tensor weight,
                                       c10::optional<torch::Tensor> bias,
                                       int64_t stride_h, int64_t stride_w,
                                       int64_t pad_h, int64_t pad_w);
"""

dw_ext = load_inline(
    name="kb_l1_082_depthwise_conv2d__constmem",
    cpp_sources=cpp_src,
    cuda_sources=cuda_src,
    functions=["depthwise_conv2d_forward"],
    extra_cuda_cflags=["-O3", "--use_fast_math"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, kernel_size: int, stride: int = 1, padding: int = 0, bias: bool = False):
        super().__init__()
        # same parameter layout / init as the reference (weight: (C, 1, K, K))
        self.conv2d = nn.Conv2d(in_channels, in_channels, kernel_size, stride=stride, padding=padding,
                                groups=in_channels, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        conv = self.conv2d
        sh, sw = conv.stride
        ph, pw = conv.padding
        return dw_ext.depthwise_conv2d_forward(x, conv.weight, conv.bias, sh, sw, ph, pw)
