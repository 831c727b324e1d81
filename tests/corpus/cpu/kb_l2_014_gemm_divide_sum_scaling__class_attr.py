# corpus: problem=kb_l2_014_gemm_divide_sum_scaling device=cpu expect=accepted policy=both
# style: extension compiled once in __init__ into a class attribute (ModelNew._ext) and called as type(self)._ext.op
# class: 1
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_cpp_src = r"""
#include <torch/extension.h>

// sum_j (x @ W^T)[b, j] / 2 * scale  ==  (x[b, :] . colsum(W)) * scale / 2
// so the [B, H] intermediate is never formed.
torch::Tensor gemm_div_sum_scale(torch::Tensor x, torch::Tensor W, double scale) {
    TORCH_CHECK(x.dim() == 2 && W.dim() == 2, "x and W must be 2-D");
    TORCH_CHECK(x.size(1) == W.size(1), "in-feature mismatch");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && W.scalar_type() == torch::kFloat32, "float32 only");
    auto xa = x.contiguous();
    auto wa = W.contiguous();
    const int64_t B = xa.size(0), I = xa.size(1), H = wa.size(0);
    auto out = torch::empty({B, 1}, xa.options());
    auto xacc = xa.accessor<float, 2>();
    auto wacc = wa.accessor<float, 2>();
    auto oacc = out.accessor<float, 2>();

    std::vector<float> wsum(I, 0.0f);
    for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < I; ++i) wsum[i] += wacc[h][i];

    const float f = float(scale) * 0.5f;
    for (int64_t b = 0; b < B; ++b) {
        float acc = 0.0f;
        for (int64_t i = 0; i < I; ++i) acc += xacc[b][i] * wsum[i];
        oacc[b][0] = acc * f;
    }
    return out;
}
"""


class ModelNew(nn.Module):
    _ext = None  # shared by all instances, compiled once

    def __init__(self, input_size, hidden_size, scaling_factor):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(hidden_size, input_size))
        self.scaling_factor = scaling_factor
        if ModelNew._ext is None:
            ModelNew._ext = load_inline(
                name="kb_l2_014_gemm_divide_sum_scaling__class_attr",
                cpp_sources=_cpp_src,
                functions=["gemm_div_sum_scale"],
                extra_cflags=["-O3"],
                verbose=False,
            )

    def forward(self, x):
        return type(self)._ext.gemm_div_sum_scale(x, self.weight, float(self.scaling_factor))
