"""The C++ candidates of the demonstration episodes (CPU `load_inline`), including one that does not build."""

from __future__ import annotations

__all__ = ["RELU_BROKEN", "RELU", "ABS", "SQUARED_DIFFERENCE"]

_MODULE = '''\
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP_SOURCE = r"""
{cpp}
"""

_ext = load_inline(
    name="{name}",
    cpp_sources=CPP_SOURCE,
    functions=["{function}"],
    extra_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, {args}):
        return _ext.{function}({args})
'''

_RELU = r"""
torch::Tensor relu_forward(torch::Tensor x) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "relu_forward expects float32");
    auto input = x.contiguous();
    auto out = torch::empty_like(input);
    const float* src = input.data_ptr<float>();
    float* dst = %s.data_ptr<float>();
    const int64_t n = input.numel();
    for (int64_t i = 0; i < n; ++i) {
        const float v = src[i];
        dst[i] = v > 0.0f ? v : 0.0f;
    }
    return out;
}"""

_ABS = r"""
#include <cmath>

torch::Tensor abs_forward(torch::Tensor x) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "abs_forward expects float32");
    auto input = x.contiguous();
    auto out = torch::empty_like(input);
    const float* src = input.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    const int64_t n = input.numel();
    for (int64_t i = 0; i < n; ++i) dst[i] = std::fabs(src[i]);
    return out;
}"""

_SQDIFF = r"""
torch::Tensor squared_difference(torch::Tensor x, torch::Tensor y) {
    TORCH_CHECK(x.sizes() == y.sizes(), "x and y must have the same shape");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && y.scalar_type() == torch::kFloat32, "expects float32");
    auto a = x.contiguous();
    auto b = y.contiguous();
    auto out = torch::empty_like(a);
    const float* pa = a.data_ptr<float>();
    const float* pb = b.data_ptr<float>();
    float* po = out.data_ptr<float>();
    const int64_t n = a.numel();
    for (int64_t i = 0; i < n; ++i) {
        const float d = pa[i] - pb[i];
        po[i] = d * d;
    }
    return out;
}"""


def _module(cpp: str, name: str, function: str, args: str) -> str:
    return _MODULE.format(cpp=cpp.strip(), name=name, function=function, args=args)


RELU_BROKEN = _module(_RELU % "output", "km_demo_relu", "relu_forward", "x")
"""Refers to `output`, which is not declared (the tensor is `out`): a real g++ error."""
RELU = _module(_RELU % "out", "km_demo_relu", "relu_forward", "x")
ABS = _module(_ABS, "km_demo_abs", "abs_forward", "x")
SQUARED_DIFFERENCE = _module(_SQDIFF, "km_demo_sqdiff", "squared_difference", "x, y")
