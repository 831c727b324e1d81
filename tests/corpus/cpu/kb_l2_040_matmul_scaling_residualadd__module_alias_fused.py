# corpus: problem=kb_l2_040_matmul_scaling_residualadd device=cpu expect=accepted policy=both
# style: module-level alias of the fused kernel; weight and bias as the candidate's own Parameters drawn like nn.Linear's
# class: 1
import math

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

fused_cpp = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>

// y = x @ W^T + b, then y * scale + y (the residual is the unscaled y), fused in one pass.
torch::Tensor linear_scale_residual(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double scaling_factor) {
    TORCH_CHECK(x.dim() == 2 && weight.dim() == 2, "linear_scale_residual: 2-D tensors expected");
    TORCH_CHECK(x.size(1) == weight.size(1), "linear_scale_residual: in_features mismatch");
    auto xc = x.contiguous(), wc = weight.contiguous(), bc = bias.contiguous();
    const int64_t batch_size = xc.size(0), in_features = xc.size(1), out_features = wc.size(0);
    auto y = torch::empty({batch_size, out_features}, xc.options());
    const float* px = xc.data_ptr<float>();
    const float* pw = wc.data_ptr<float>();
    const float* pb = bc.data_ptr<float>();
    float* py = y.data_ptr<float>();
    const float s = static_cast<float>(scaling_factor);
    at::parallel_for(0, batch_size * out_features, 128, [&](int64_t begin, int64_t end) {
        for (int64_t idx = begin; idx < end; ++idx) {
            const int64_t r = idx / out_features, c = idx % out_features;
            float acc = pb[c];
            for (int64_t k = 0; k < in_features; ++k) acc += px[r * in_features + k] * pw[c * in_features + k];
            py[idx] = acc * s + acc;
        }
    });
    return y;
}

// In place: y = y * scale + y.
void scale_residual_(torch::Tensor y, double scaling_factor) {
    TORCH_CHECK(y.is_contiguous() && y.scalar_type() == torch::kFloat32, "scale_residual_: contiguous float32");
    float* p = y.data_ptr<float>();
    const float s = static_cast<float>(scaling_factor);
    at::parallel_for(0, y.numel(), 4096, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) p[i] = p[i] * s + p[i];
    });
}
"""

_ext = load_inline(
    name="corpus_matmul_scale_res_cpu",
    cpp_sources=fused_cpp,
    functions=["linear_scale_residual", "scale_residual_"],
    extra_cflags=["-O3"],
)
linear_scale_residual = _ext.linear_scale_residual


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scaling_factor):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out_features, in_features))
        self.bias = nn.Parameter(torch.empty(out_features))
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        bound = 1 / math.sqrt(in_features)
        nn.init.uniform_(self.bias, -bound, bound)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        return linear_scale_residual(x, self.weight, self.bias, self.scaling_factor)
