# corpus: problem=kb_l1_036_rmsnorm device=cpu expect=accepted policy=kernelbench
# style: an RMSNorm block of the candidate's own in an nn.ModuleList; ATen reduction inside the extension
# class: 3, 2
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>

// RMS normalization over dim 1 of a (B, C, ...) tensor: the root mean square comes from ATen (torch::mean,
// torch::sqrt), the division is a loop over the (b, c) planes.
torch::Tensor rms_norm_forward(torch::Tensor x, double eps) {
    TORCH_CHECK(x.dim() >= 2, "rms_norm_forward: at least 2 dims expected");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "rms_norm_forward: float32 only");
    auto xc = x.contiguous();
    auto rms = torch::sqrt(torch::mean(xc * xc, {1}, /*keepdim=*/true) + eps).contiguous();
    const int64_t B = xc.size(0);
    const int64_t C = xc.size(1);
    const int64_t inner = xc.numel() / (B * C);
    auto out = torch::empty_like(xc);
    const float* px = xc.data_ptr<float>();
    const float* pr = rms.data_ptr<float>();
    float* po = out.data_ptr<float>();
    at::parallel_for(0, B * C, 1, [&](int64_t p0, int64_t p1) {
        for (int64_t plane = p0; plane < p1; ++plane) {
            const int64_t b = plane / C;
            const float* src = px + plane * inner;
            const float* r = pr + b * inner;
            float* dst = po + plane * inner;
            for (int64_t i = 0; i < inner; ++i) dst[i] = src[i] / r[i];
        }
    });
    return out;
}
"""

rmsnorm = load_inline(
    name="corpus_rmsnorm_cpu",
    cpp_sources=source,
    functions=["rms_norm_forward"],
    extra_cflags=["-O3"],
)


class RMSNormBlock(nn.Module):
    def __init__(self, eps):
        super().__init__()
        self.eps = eps

    def forward(self, x):
        return rmsnorm.rms_norm_forward(x.contiguous(), self.eps)


class ModelNew(nn.Module):
    def __init__(self, num_features, eps=1e-5):
        super().__init__()
        self.layers = nn.ModuleList([RMSNormBlock(eps)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x
