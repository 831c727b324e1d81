# corpus: problem=kb_l2_071_conv2d_divide_leakyrelu device=cpu expect=accepted policy=both
# style: global _ext lazy loader (verbose=True) called in __init__ and forward, std::optional bias with a py::none() default and pybind keyword arguments, @property bias/divisor, accessor<float, 4>, OpenMP collapse(2) direct convolution with divide + LeakyReLU fused, -std=c++17 (blind round 13)
# class: 2, 7
from typing import Optional

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <optional>
#include <omp.h>

// y = leaky_relu(conv2d(x, w, b) / divisor, slope), valid padding, stride 1.
torch::Tensor conv_div_leaky(torch::Tensor x, torch::Tensor w, std::optional<torch::Tensor> b,
                             double divisor, double negative_slope) {
    TORCH_CHECK(x.dim() == 4, "x must be NCHW");
    TORCH_CHECK(w.dim() == 4, "w must be OIHW");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "float32 only");
    x = x.contiguous();
    w = w.contiguous();

    const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
    const int64_t O = w.size(0), KH = w.size(2), KW = w.size(3);
    const int64_t OH = H - KH + 1, OW = W - KW + 1;

    auto y = torch::empty({N, O, OH, OW}, x.options());
    auto xa = x.accessor<float, 4>();
    auto wa = w.accessor<float, 4>();
    auto ya = y.accessor<float, 4>();

    torch::Tensor bias = b.has_value() ? b->contiguous() : torch::zeros({O}, x.options());
    auto ba = bias.accessor<float, 1>();

    const float div = static_cast<float>(divisor);
    const float slope = static_cast<float>(negative_slope);

    #pragma omp parallel for collapse(2) schedule(static)
    for (int64_t n = 0; n < N; ++n) {
        for (int64_t o = 0; o < O; ++o) {
            for (int64_t oh = 0; oh < OH; ++oh) {
                for (int64_t ow = 0; ow < OW; ++ow) {
                    float acc = ba[o];
                    for (int64_t c = 0; c < C; ++c) {
                        for (int64_t kh = 0; kh < KH; ++kh) {
                            for (int64_t kw = 0; kw < KW; ++kw) {
                                acc += xa[n][c][oh + kh][ow + kw] * wa[o][c][kh][kw];
                            }
                        }
                    }
                    const float v = acc / div;
                    ya[n][o][oh][ow] = v > 0.0f ? v : v * slope;
                }
            }
        }
    }
    return y;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("conv_div_leaky", &conv_div_leaky, "Conv2d + divide + LeakyReLU (CPU)",
          py::arg("x"), py::arg("w"), py::arg("b") = py::none(),
          py::arg("divisor") = 1.0, py::arg("negative_slope") = 0.01);
}
"""

_ext = None


def _get_ext():
    global _ext
    if _ext is None:
        _ext = load_inline(
            name="kb_l2_071_conv2d_divide_leakyrelu__lazyext_accessor_omp_collapse_stdoptional_property",
            cpp_sources=[_CPP],
            extra_cflags=["-O3", "-march=native", "-fopenmp", "-std=c++17"],
            extra_ldflags=["-fopenmp"],
            verbose=True,
        )
    return _ext


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, divisor):
        super(ModelNew, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self._divisor = float(divisor)
        self.negative_slope = 0.01
        _get_ext()

    @property
    def divisor(self) -> float:
        return self._divisor

    @property
    def bias(self) -> Optional[torch.Tensor]:
        return self.conv.bias

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ext = _get_ext()
        return ext.conv_div_leaky(
            x, self.conv.weight, b=self.bias,
            divisor=self.divisor, negative_slope=self.negative_slope,
        )
