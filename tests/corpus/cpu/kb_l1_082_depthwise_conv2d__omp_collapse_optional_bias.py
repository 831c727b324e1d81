# corpus: problem=kb_l1_082_depthwise_conv2d device=cpu expect=accepted policy=both
# style: keeps self.conv2d; c10::optional bias; #pragma omp parallel for collapse(2) with -fopenmp in cflags and ldflags; accessor<float,4>
# class: 8
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

batch_size = 16
in_channels = 64
kernel_size = 3
width = 512
height = 512
stride = 1
padding = 0

cpp_source = r"""
#include <torch/extension.h>
#include <omp.h>
#include <algorithm>

torch::Tensor depthwise_conv2d_forward(torch::Tensor input,
                                       torch::Tensor weight,
                                       c10::optional<torch::Tensor> bias,
                                       int64_t stride,
                                       int64_t padding) {
    TORCH_CHECK(input.dim() == 4, "input must be NCHW");
    TORCH_CHECK(weight.dim() == 4 && weight.size(1) == 1, "weight must be (C, 1, KH, KW)");
    TORCH_CHECK(input.scalar_type() == torch::kFloat32, "float32 only");
    TORCH_CHECK(stride >= 1 && padding >= 0, "bad stride / padding");

    auto x = input.contiguous();
    auto w = weight.contiguous();
    const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
    const int64_t KH = w.size(2), KW = w.size(3);
    TORCH_CHECK(w.size(0) == C, "depthwise: weight.size(0) must equal channels");
    const int64_t OH = (H + 2 * padding - KH) / stride + 1;
    const int64_t OW = (W + 2 * padding - KW) / stride + 1;
    TORCH_CHECK(OH > 0 && OW > 0, "output would be empty");

    auto out = torch::empty({N, C, OH, OW}, x.options());
    auto xa = x.accessor<float, 4>();
    auto wa = w.accessor<float, 4>();
    auto oa = out.accessor<float, 4>();

    const bool has_bias = bias.has_value() && bias->defined();
    torch::Tensor b;
    if (has_bias) b = bias->contiguous();
    const float* bp = has_bias ? b.data_ptr<float>() : nullptr;

    #pragma omp parallel for collapse(2) schedule(static)
    for (int64_t n = 0; n < N; ++n) {
        for (int64_t c = 0; c < C; ++c) {
            auto xin = xa[n][c];
            auto yout = oa[n][c];
            auto filt = wa[c][0];
            const float b0 = has_bias ? bp[c] : 0.f;
            for (int64_t oh = 0; oh < OH; ++oh) {
                float* yrow = &yout[oh][0];
                for (int64_t ow = 0; ow < OW; ++ow) yrow[ow] = b0;
                for (int64_t kh = 0; kh < KH; ++kh) {
                    const int64_t ih = oh * stride - padding + kh;
                    if (ih < 0 || ih >= H) continue;
                    const float* xrow = &xin[ih][0];
                    for (int64_t kw = 0; kw < KW; ++kw) {
                        const float wv = filt[kh][kw];
                        // valid ow range so that 0 <= ow*stride - padding + kw < W
                        int64_t ow_lo = 0;
                        const int64_t off = kw - padding;
                        if (off < 0) ow_lo = (-off + stride - 1) / stride;
                        int64_t ow_hi = OW;  // exclusive
                        const int64_t lim = (W - 1 - off);
                        if (lim < 0) continue;
                        ow_hi = std::min<int64_t>(OW, lim / stride + 1);
                        if (stride == 1) {
                            const float* src = xrow + off;
                            for (int64_t ow = ow_lo; ow < ow_hi; ++ow) yrow[ow] += wv * src[ow];
                        } else {
                            for (int64_t ow = ow_lo; ow < ow_hi; ++ow) yrow[ow] += wv * xrow[ow * stride + off];
                        }
                    }
                }
            }
        }
    }
    return out;
}
"""

depthwise_ext = load_inline(
    name="kb_depthwise_conv2d_omp",
    cpp_sources=cpp_source,
    functions=["depthwise_conv2d_forward"],
    extra_cflags=["-O3", "-march=native", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, kernel_size: int, stride: int = 1, padding: int = 0, bias: bool = False):
        super().__init__()
        # same module as the reference -> same parameter names and init
        self.conv2d = nn.Conv2d(in_channels, in_channels, kernel_size, stride=stride, padding=padding,
                                groups=in_channels, bias=bias)
        self.stride = stride
        self.padding = padding

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return depthwise_ext.depthwise_conv2d_forward(
            x, self.conv2d.weight, self.conv2d.bias, self.stride, self.padding)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, kernel_size, stride, padding]
