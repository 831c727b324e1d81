# corpus: problem=kb_l2_086_matmul_divide_gelu device=cpu expect=accepted policy=both
# style: hand-written PYBIND11_MODULE; the op called through functools.partial
# class: 1
import functools
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_cpp_src = r"""
#include <torch/extension.h>
#include <cmath>

// out = gelu_erf((x @ W^T + b) / divisor)
torch::Tensor linear_div_gelu(torch::Tensor x, torch::Tensor W, torch::Tensor b, double divisor) {
    TORCH_CHECK(x.dim() == 2 && W.dim() == 2 && b.dim() == 1, "bad ranks");
    TORCH_CHECK(x.size(1) == W.size(1) && W.size(0) == b.size(0), "bad shapes");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "float32 only");
    x = x.contiguous(); W = W.contiguous(); b = b.contiguous();
    const int64_t B = x.size(0), I = x.size(1), O = W.size(0);
    auto out = torch::empty({B, O}, x.options());
    const float* px = x.data_ptr<float>();
    const float* pw = W.data_ptr<float>();
    const float* pb = b.data_ptr<float>();
    float* po = out.data_ptr<float>();
    const float inv = float(1.0 / divisor);
    const float r2 = 0.70710678118654752440f;
    #pragma omp parallel for collapse(2) schedule(static)
    for (int64_t r = 0; r < B; ++r) {
        for (int64_t o = 0; o < O; ++o) {
            const float* xr = px + r * I;
            const float* wr = pw + o * I;
            float acc = 0.f;
            #pragma omp simd reduction(+:acc)
            for (int64_t i = 0; i < I; ++i) acc += xr[i] * wr[i];
            const float v = (acc + pb[o]) * inv;
            po[r * O + o] = 0.5f * v * (1.0f + std::erf(v * r2));
        }
    }
    return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("linear_div_gelu", &linear_div_gelu, "fused linear / divide / erf-GELU (CPU)",
          py::arg("x"), py::arg("W"), py::arg("b"), py::arg("divisor"));
}
"""

_KERNELS = {}


def _kernels():
    if "mod" not in _KERNELS:
        _KERNELS["mod"] = load_inline(
            name="kb_l2_086_matmul_divide_gelu__partial_pybind",
            cpp_sources=_cpp_src,
            extra_cflags=["-O3", "-fopenmp"],
            extra_ldflags=["-fopenmp"],
            verbose=False,
        )
    return _KERNELS["mod"]


class ModelNew(nn.Module):
    def __init__(self, input_size, output_size, divisor):
        super().__init__()
        self.linear = nn.Linear(input_size, output_size)
        self.divisor = divisor
        # bind the constant divisor once
        self._fused = functools.partial(_kernels().linear_div_gelu, divisor=float(divisor))

    def forward(self, x):
        return self._fused(x, self.linear.weight, self.linear.bias)
