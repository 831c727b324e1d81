# corpus: problem=kb_l1_036_rmsnorm device=cpu expect=accepted policy=both
# style: two kernels, the second scaling the first's output in place
# class: 8
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Two kernels: one computes the inverse RMS over dim 1 for every (b, spatial) position,
# the second scales the kernel's own output buffer in place.
rms_src = r"""
#include <torch/extension.h>
#include <cmath>
#include <cstring>

// x viewed as (B, C, S); returns inv_rms of shape (B, S)
torch::Tensor rms_inv(torch::Tensor x, double eps) {
    TORCH_CHECK(x.dim() >= 2, "need at least 2 dims");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "float32 only");
    auto xc = x.contiguous();
    const int64_t B = xc.size(0), C = xc.size(1);
    const int64_t S = C == 0 ? 0 : xc.numel() / (B * C);
    auto inv = torch::empty({B, S}, xc.options());
    const float* p = xc.data_ptr<float>();
    float* q = inv.data_ptr<float>();
    #pragma omp parallel for
    for (int64_t b = 0; b < B; ++b) {
        const float* xb = p + b * C * S;
        float* qb = q + b * S;
        for (int64_t s = 0; s < S; ++s) qb[s] = 0.f;
        for (int64_t c = 0; c < C; ++c) {
            const float* xr = xb + c * S;
            for (int64_t s = 0; s < S; ++s) qb[s] += xr[s] * xr[s];
        }
        for (int64_t s = 0; s < S; ++s)
            qb[s] = 1.0f / std::sqrt(qb[s] / (float)C + (float)eps);
    }
    return inv;
}

// out (B, C, S) *= inv (B, S), in place
void scale_inplace(torch::Tensor out, torch::Tensor inv) {
    TORCH_CHECK(out.is_contiguous() && inv.is_contiguous(), "contiguous tensors required");
    const int64_t B = out.size(0), C = out.size(1);
    const int64_t S = inv.size(1);
    float* o = out.data_ptr<float>();
    const float* q = inv.data_ptr<float>();
    #pragma omp parallel for collapse(2)
    for (int64_t b = 0; b < B; ++b)
        for (int64_t c = 0; c < C; ++c) {
            float* orow = o + (b * C + c) * S;
            const float* qb = q + b * S;
            for (int64_t s = 0; s < S; ++s) orow[s] *= qb[s];
        }
}

torch::Tensor copy_contig(torch::Tensor x) {
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    std::memcpy(out.data_ptr<float>(), xc.data_ptr<float>(), sizeof(float) * xc.numel());
    return out;
}
"""

rms_ext = load_inline(
    name="kb_l1_036_rmsnorm__inplace_epilogue",
    cpp_sources=rms_src,
    functions=["rms_inv", "scale_inplace", "copy_contig"],
    extra_cflags=["-O3", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-5):
        super().__init__()
        self.num_features = num_features
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        inv = rms_ext.rms_inv(x, self.eps)
        out = rms_ext.copy_contig(x)
        rms_ext.scale_inplace(out, inv)
        return out
