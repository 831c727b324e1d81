# corpus: problem=kb_l1_088_mingpt_new_gelu device=cpu expect=accepted policy=both
# style: torch.autograd.Function with a C++ backward kernel, std::vector<torch::Tensor> return, PYBIND11_MODULE, omp with -lgomp
# class: 2
import math

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

batch_size = 2000
dim = 2000

cpp_source = r"""
#include <torch/extension.h>
#include <vector>
#include <cmath>

namespace {
constexpr float kAlpha = 0.7978845608028654f;   // sqrt(2/pi)
constexpr float kBeta  = 0.044715f;
}

// returns {y, t} where t = tanh(inner) is kept for the backward pass
std::vector<torch::Tensor> new_gelu_forward(torch::Tensor x) {
    TORCH_CHECK(x.device().is_cpu(), "new_gelu_forward: CPU tensor required");
    TORCH_CHECK(x.scalar_type() == at::kFloat, "new_gelu_forward: float32 required");
    x = x.contiguous();
    auto y = torch::empty_like(x);
    auto t = torch::empty_like(x);
    const float* px = x.data_ptr<float>();
    float* py = y.data_ptr<float>();
    float* pt = t.data_ptr<float>();
    const int64_t n = x.numel();
    #pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) {
        const float v = px[i];
        const float th = std::tanh(kAlpha * (v + kBeta * v * v * v));
        pt[i] = th;
        py[i] = 0.5f * v * (1.0f + th);
    }
    return {y, t};
}

torch::Tensor new_gelu_backward(torch::Tensor grad, torch::Tensor x, torch::Tensor t) {
    grad = grad.contiguous(); x = x.contiguous(); t = t.contiguous();
    auto gx = torch::empty_like(x);
    const float* pg = grad.data_ptr<float>();
    const float* px = x.data_ptr<float>();
    const float* pt = t.data_ptr<float>();
    float* po = gx.data_ptr<float>();
    const int64_t n = x.numel();
    #pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) {
        const float v = px[i], th = pt[i];
        const float dinner = kAlpha * (1.0f + 3.0f * kBeta * v * v);
        const float d = 0.5f * (1.0f + th) + 0.5f * v * (1.0f - th * th) * dinner;
        po[i] = pg[i] * d;
    }
    return gx;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("forward", &new_gelu_forward, "minGPT new GELU forward (CPU)");
    m.def("backward", &new_gelu_backward, "minGPT new GELU backward (CPU)");
}
"""

gelu_cpp = load_inline(
    name="kb_new_gelu_autograd",
    cpp_sources=[cpp_source],
    extra_cflags=["-O3", "-fopenmp"],
    extra_ldflags=["-lgomp"],
    verbose=False,
)


class NewGELUFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y, t = gelu_cpp.forward(x)
        ctx.save_for_backward(x, t)
        return y

    @staticmethod
    def backward(ctx, grad_out):
        x, t = ctx.saved_tensors
        return gelu_cpp.backward(grad_out, x, t)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return NewGELUFunction.apply(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
