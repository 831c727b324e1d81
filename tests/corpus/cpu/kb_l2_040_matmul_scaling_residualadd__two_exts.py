# corpus: problem=kb_l2_040_matmul_scaling_residualadd device=cpu expect=accepted policy=both
# style: two extensions (a GEMM and an epilogue)
# class: 7
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# ---- extension 1: GEMM with bias, y = x @ W^T + b --------------------------------
gemm_src = r"""
#include <torch/extension.h>

torch::Tensor linear_fwd(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
    TORCH_CHECK(x.dim() == 2 && w.dim() == 2, "linear_fwd: 2-D x and w expected");
    TORCH_CHECK(x.size(1) == w.size(1), "linear_fwd: in_features mismatch");
    TORCH_CHECK(b.numel() == w.size(0), "linear_fwd: bias size mismatch");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "linear_fwd: float32 expected");
    auto xc = x.contiguous();
    auto wc = w.contiguous();
    auto bc = b.contiguous();
    const int64_t M = xc.size(0), K = xc.size(1), N = wc.size(0);
    auto y = torch::empty({M, N}, xc.options());
    const float* xp = xc.data_ptr<float>();
    const float* wp = wc.data_ptr<float>();
    const float* bp = bc.data_ptr<float>();
    float* yp = y.data_ptr<float>();

    #pragma omp parallel for collapse(2) schedule(static)
    for (int64_t m = 0; m < M; ++m) {
        for (int64_t n = 0; n < N; ++n) {
            const float* xr = xp + m * K;
            const float* wr = wp + n * K;
            float acc = 0.f;
            #pragma omp simd reduction(+:acc)
            for (int64_t k = 0; k < K; ++k) acc += xr[k] * wr[k];
            yp[m * N + n] = acc + bp[n];
        }
    }
    return y;
}
"""

gemm_ext = load_inline(
    name="kb_l2_040_gemm_ext",
    cpp_sources=gemm_src,
    functions=["linear_fwd"],
    extra_cflags=["-O3", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    verbose=False,
)

# ---- extension 2: epilogue out = y * s + y, written into a given tensor -------------
epilogue_src = r"""
#include <torch/extension.h>

torch::Tensor scale_residual_out(torch::Tensor y, double scale, torch::Tensor out) {
    TORCH_CHECK(y.is_contiguous() && out.is_contiguous(), "scale_residual_out: contiguous expected");
    TORCH_CHECK(y.numel() == out.numel(), "scale_residual_out: size mismatch");
    TORCH_CHECK(y.scalar_type() == torch::kFloat32 && out.scalar_type() == torch::kFloat32,
                "scale_residual_out: float32 expected");
    const float s = static_cast<float>(scale);
    const float* yp = y.data_ptr<float>();
    float* op = out.data_ptr<float>();
    const int64_t n = y.numel();
    for (int64_t i = 0; i < n; ++i) {
        const float v = yp[i];
        op[i] = v * s + v;   // scaled branch + detached residual (same values)
    }
    return out;
}
"""

epilogue_ext = load_inline(
    name="kb_l2_040_epilogue_ext",
    cpp_sources=epilogue_src,
    functions=["scale_residual_out"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    """Custom GEMM (ext 1) followed by a custom scale + residual epilogue (ext 2)."""

    def __init__(self, in_features, out_features, scaling_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        y = gemm_ext.linear_fwd(x, self.matmul.weight, self.matmul.bias)
        out = torch.empty_like(y)
        return epilogue_ext.scale_residual_out(y, float(self.scaling_factor), out)
