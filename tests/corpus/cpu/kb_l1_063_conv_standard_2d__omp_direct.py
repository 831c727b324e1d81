# corpus: problem=kb_l1_063_conv_standard_2d device=cpu expect=accepted policy=both
# style: direct convolution in OpenMP over (n, oc, oh) with stride, padding, dilation, groups and an optional bias; the weight kept as nn.Parameter
# class: 7
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

conv2d_cpp_source = r"""
#include <torch/extension.h>
#include <omp.h>
#include <algorithm>
#include <optional>

// Direct 2D convolution (NCHW, OIHW weights) with stride / padding / dilation / groups.
torch::Tensor conv2d_direct(torch::Tensor input, torch::Tensor weight, std::optional<torch::Tensor> bias,
                            int64_t stride_h, int64_t stride_w, int64_t pad_h, int64_t pad_w,
                            int64_t dil_h, int64_t dil_w, int64_t groups) {
    TORCH_CHECK(input.dim() == 4, "input must be NCHW");
    TORCH_CHECK(weight.dim() == 4, "weight must be OIHW");
    TORCH_CHECK(input.scalar_type() == torch::kFloat32, "only float32 supported");
    TORCH_CHECK(weight.scalar_type() == torch::kFloat32, "only float32 supported");
    TORCH_CHECK(!input.is_cuda(), "CPU kernel");

    auto x = input.contiguous();
    auto w = weight.contiguous();

    const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
    const int64_t OC = w.size(0), ICg = w.size(1), KH = w.size(2), KW = w.size(3);
    TORCH_CHECK(C == ICg * groups, "channel / groups mismatch");
    TORCH_CHECK(OC % groups == 0, "out_channels must be divisible by groups");
    const int64_t OCg = OC / groups;

    const int64_t OH = (H + 2 * pad_h - dil_h * (KH - 1) - 1) / stride_h + 1;
    const int64_t OW = (W + 2 * pad_w - dil_w * (KW - 1) - 1) / stride_w + 1;
    TORCH_CHECK(OH > 0 && OW > 0, "output size is empty");

    auto out = torch::empty({N, OC, OH, OW}, x.options());

    const float* xp = x.data_ptr<float>();
    const float* wp = w.data_ptr<float>();
    float* op = out.data_ptr<float>();
    const float* bp = nullptr;
    torch::Tensor b;
    if (bias.has_value() && bias->defined()) {
        b = bias->contiguous();
        TORCH_CHECK(b.numel() == OC, "bias size mismatch");
        bp = b.data_ptr<float>();
    }

    #pragma omp parallel for collapse(2) schedule(static)
    for (int64_t n = 0; n < N; ++n) {
        for (int64_t oc = 0; oc < OC; ++oc) {
            const int64_t g = oc / OCg;
            float* o = op + (n * OC + oc) * OH * OW;
            const float bv = bp ? bp[oc] : 0.0f;
            for (int64_t i = 0; i < OH * OW; ++i) o[i] = bv;

            for (int64_t icg = 0; icg < ICg; ++icg) {
                const int64_t ic = g * ICg + icg;
                const float* xin = xp + (n * C + ic) * H * W;
                const float* wk = wp + ((oc * ICg + icg) * KH) * KW;
                for (int64_t kh = 0; kh < KH; ++kh) {
                    for (int64_t kw = 0; kw < KW; ++kw) {
                        const float wv = wk[kh * KW + kw];
                        const int64_t off_w = kw * dil_w - pad_w;
                        // valid ow range: 0 <= ow*stride_w + off_w < W
                        int64_t ow_lo = 0;
                        if (off_w < 0) ow_lo = (-off_w + stride_w - 1) / stride_w;
                        int64_t ow_hi = OW;  // exclusive
                        if (W - off_w <= 0) ow_hi = 0;
                        else ow_hi = std::min<int64_t>(OW, (W - off_w + stride_w - 1) / stride_w);
                        if (ow_lo >= ow_hi) continue;
                        for (int64_t oh = 0; oh < OH; ++oh) {
                            const int64_t ih = oh * stride_h + kh * dil_h - pad_h;
                            if (ih < 0 || ih >= H) continue;
                            const float* row = xin + ih * W + off_w;
                            float* orow = o + oh * OW;
                            if (stride_w == 1) {
                                #pragma omp simd
                                for (int64_t ow = ow_lo; ow < ow_hi; ++ow) orow[ow] += wv * row[ow];
                            } else {
                                for (int64_t ow = ow_lo; ow < ow_hi; ++ow) orow[ow] += wv * row[ow * stride_w];
                            }
                        }
                    }
                }
            }
        }
    }
    return out;
}
"""

conv2d_ext = load_inline(
    name="kb_l1_063_conv_standard_2d__omp_direct",
    cpp_sources=conv2d_cpp_source,
    functions=["conv2d_direct"],
    extra_cflags=["-O3", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    verbose=False,
)


class ModelNew(nn.Module):
    """Standard 2D convolution computed by a custom OpenMP direct-convolution kernel."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1, padding: int = 0,
                 dilation: int = 1, groups: int = 1, bias: bool = False):
        super().__init__()
        # nn.Conv2d is kept only as a container for the parameters (same init as the reference).
        self.conv2d = nn.Conv2d(in_channels, out_channels, (kernel_size, kernel_size), stride=stride,
                                padding=padding, dilation=dilation, groups=groups, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        c = self.conv2d
        return conv2d_ext.conv2d_direct(
            x, c.weight, c.bias,
            c.stride[0], c.stride[1], c.padding[0], c.padding[1],
            c.dilation[0], c.dilation[1], c.groups,
        )
