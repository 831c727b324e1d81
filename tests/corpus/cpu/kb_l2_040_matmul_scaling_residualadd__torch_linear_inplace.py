# corpus: problem=kb_l2_040_matmul_scaling_residualadd device=cpu expect=accepted policy=kernelbench
# style: PyTorch's nn.Linear, then a custom in-place epilogue returning None (void), self.op alias
# class: 1, 3
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
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

ext = load_inline(
    name="corpus_matmul_scale_res_cpu",
    cpp_sources=SRC,
    functions=["linear_scale_residual", "scale_residual_"],
    extra_cflags=["-O3"],
    verbose=True,
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scaling_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor
        self.op = ext.scale_residual_

    def forward(self, x):
        x = self.matmul(x)
        self.op(x, self.scaling_factor)
        return x
