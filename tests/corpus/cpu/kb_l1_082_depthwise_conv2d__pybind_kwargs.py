# corpus: problem=kb_l1_082_depthwise_conv2d device=cpu expect=accepted policy=both
# style: hand-written PYBIND11_MODULE with keyword and default arguments (py::none() bias), c10::optional, @torch.no_grad()
# class: 3, 7
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

dw_source = r"""
#include <torch/extension.h>
#include <pybind11/pybind11.h>
namespace py = pybind11;

// Depthwise 2D convolution (groups == channels, one filter per channel).
// x: [N, C, H, W], weight: [C, 1, K, K] (or [C, 1, KH, KW]), bias: optional [C].
torch::Tensor depthwise_conv2d(torch::Tensor x,
                               torch::Tensor weight,
                               c10::optional<torch::Tensor> bias,
                               int64_t stride,
                               int64_t padding) {
    TORCH_CHECK(x.dim() == 4, "x must be NCHW");
    TORCH_CHECK(weight.dim() == 4 && weight.size(1) == 1, "weight must be [C,1,KH,KW]");
    TORCH_CHECK(x.size(1) == weight.size(0), "channel mismatch");
    TORCH_CHECK(stride >= 1 && padding >= 0, "bad stride/padding");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32,
                "float32 only");

    auto xc = x.contiguous();
    auto wc = weight.contiguous();
    const int64_t N = xc.size(0), C = xc.size(1), H = xc.size(2), W = xc.size(3);
    const int64_t KH = wc.size(2), KW = wc.size(3);
    const int64_t OH = (H + 2 * padding - KH) / stride + 1;
    const int64_t OW = (W + 2 * padding - KW) / stride + 1;
    TORCH_CHECK(OH > 0 && OW > 0, "output would be empty");

    auto out = torch::empty({N, C, OH, OW}, xc.options());
    const float* xp = xc.data_ptr<float>();
    const float* wp = wc.data_ptr<float>();
    float* op = out.data_ptr<float>();

    torch::Tensor bc;
    const float* bp = nullptr;
    if (bias.has_value() && bias->defined()) {
        bc = bias->contiguous();
        TORCH_CHECK(bc.numel() == C, "bias size mismatch");
        bp = bc.data_ptr<float>();
    }

    at::parallel_for(0, N * C, 1, [&](int64_t begin, int64_t end) {
        for (int64_t nc = begin; nc < end; ++nc) {
            const int64_t c = nc % C;
            const float* src = xp + nc * H * W;
            const float* k = wp + c * KH * KW;
            float* dst = op + nc * OH * OW;
            const float b = bp ? bp[c] : 0.f;
            for (int64_t oh = 0; oh < OH; ++oh) {
                const int64_t ih0 = oh * stride - padding;
                for (int64_t ow = 0; ow < OW; ++ow) {
                    const int64_t iw0 = ow * stride - padding;
                    float acc = b;
                    for (int64_t kh = 0; kh < KH; ++kh) {
                        const int64_t ih = ih0 + kh;
                        if (ih < 0 || ih >= H) continue;
                        const float* srow = src + ih * W;
                        const float* krow = k + kh * KW;
                        for (int64_t kw = 0; kw < KW; ++kw) {
                            const int64_t iw = iw0 + kw;
                            if (iw < 0 || iw >= W) continue;
                            acc += srow[iw] * krow[kw];
                        }
                    }
                    dst[oh * OW + ow] = acc;
                }
            }
        }
    });
    return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("depthwise_conv2d", &depthwise_conv2d, "Depthwise conv2d forward (CPU)",
          py::arg("x"), py::arg("weight"), py::arg("bias") = py::none(),
          py::arg("stride") = 1, py::arg("padding") = 0);
}
"""

dw_ext = load_inline(
    name="kb_l1_082_depthwise_conv2d__pybind_kwargs",
    cpp_sources=dw_source,
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    """Depthwise conv2d: nn.Conv2d keeps the parameters, the C++ kernel does the math."""

    def __init__(self, in_channels: int, kernel_size: int, stride: int = 1, padding: int = 0, bias: bool = False):
        super().__init__()
        self.conv2d = nn.Conv2d(in_channels, in_channels, kernel_size, stride=stride, padding=padding,
                                groups=in_channels, bias=bias)

    @torch.no_grad()
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        conv = self.conv2d
        return dw_ext.depthwise_conv2d(
            x, conv.weight, bias=conv.bias, stride=conv.stride[0], padding=conv.padding[0]
        )
