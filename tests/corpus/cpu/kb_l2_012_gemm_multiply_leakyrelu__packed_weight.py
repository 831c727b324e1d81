# corpus: problem=kb_l2_012_gemm_multiply_leakyrelu device=cpu expect=accepted policy=both
# style: the weight packed once and cached, repacked when its data pointer, version or shape changes
# class: 8
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_cpp_src = r"""
#include <torch/extension.h>

// W is [out, in]; returns W^T laid out [in, out] so the GEMM inner loop runs over contiguous output columns.
torch::Tensor pack_weight(torch::Tensor W) {
    TORCH_CHECK(W.dim() == 2 && W.scalar_type() == torch::kFloat32, "expected 2-D float32 weight");
    auto w = W.contiguous();
    const int64_t O = w.size(0), I = w.size(1);
    auto Wt = torch::empty({I, O}, w.options());
    const float* src = w.data_ptr<float>();
    float* dst = Wt.data_ptr<float>();
    #pragma omp parallel for
    for (int64_t o = 0; o < O; ++o)
        for (int64_t i = 0; i < I; ++i) dst[i * O + o] = src[o * I + i];
    return Wt;
}

// y = leaky_relu((x @ W^T + b) * mult, slope), using the packed Wt [in, out]
torch::Tensor gemm_mul_lrelu(torch::Tensor x, torch::Tensor Wt, torch::Tensor b, double mult, double slope) {
    TORCH_CHECK(x.dim() == 2 && x.size(1) == Wt.size(0), "shape mismatch");
    auto xc = x.contiguous();
    auto bc = b.contiguous();
    const int64_t B = xc.size(0), I = xc.size(1), O = Wt.size(1);
    auto y = torch::empty({B, O}, xc.options());
    const float* px = xc.data_ptr<float>();
    const float* pw = Wt.data_ptr<float>();
    const float* pb = bc.data_ptr<float>();
    float* py = y.data_ptr<float>();
    const float m = float(mult), s = float(slope);
    #pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < B; ++r) {
        float* yr = py + r * O;
        for (int64_t o = 0; o < O; ++o) yr[o] = pb[o];
        const float* xr = px + r * I;
        for (int64_t i = 0; i < I; ++i) {
            const float xv = xr[i];
            const float* wr = pw + i * O;
            #pragma omp simd
            for (int64_t o = 0; o < O; ++o) yr[o] += xv * wr[o];
        }
        for (int64_t o = 0; o < O; ++o) {
            float v = yr[o] * m;
            yr[o] = v > 0.f ? v : v * s;
        }
    }
    return y;
}
"""

_ext = load_inline(
    name="kb_l2_012_gemm_multiply_leakyrelu__packed_weight",
    cpp_sources=_cpp_src,
    functions=["pack_weight", "gemm_mul_lrelu"],
    extra_cflags=["-O3", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, multiplier, negative_slope):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.multiplier = multiplier
        self.negative_slope = negative_slope
        self._packed = None
        self._packed_key = None

    def _packed_weight(self):
        w = self.gemm.weight
        # repack only when the weight tensor is replaced or modified in place
        key = (w.data_ptr(), w._version, tuple(w.shape))
        if self._packed is None or self._packed_key != key:
            self._packed = _ext.pack_weight(w.detach())
            self._packed_key = key
        return self._packed

    def forward(self, x):
        return _ext.gemm_mul_lrelu(x, self._packed_weight(), self.gemm.bias.detach(),
                                   float(self.multiplier), float(self.negative_slope))
