# corpus: problem=kb_l1_021_sigmoid device=cpu expect=accepted policy=both
# style: extension compiled on the first forward by a classmethod into a class attribute (cls._ext), returned as a lambda and kept in self._op
# class: 1,2
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SIGMOID_SRC = r"""
#include <torch/extension.h>
#include <cmath>

torch::Tensor sigmoid_fwd(torch::Tensor x, int64_t grain) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "float32 expected");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const float* in = xc.data_ptr<float>();
    float* out = y.data_ptr<float>();
    const int64_t n = xc.numel();
    #pragma omp parallel for schedule(static, grain)
    for (int64_t i = 0; i < n; ++i) {
        const float v = in[i];
        // numerically stable in both tails
        if (v >= 0.f) {
            out[i] = 1.f / (1.f + std::exp(-v));
        } else {
            const float e = std::exp(v);
            out[i] = e / (1.f + e);
        }
    }
    return y;
}
"""


class ModelNew(nn.Module):
    # compiled once, on first use, and shared by all instances
    _ext = None

    @classmethod
    def _get_op(cls):
        if cls._ext is None:
            cls._ext = load_inline(
                name="kb_l1_021_sigmoid__lazy_classattr",
                cpp_sources=SIGMOID_SRC,
                functions=["sigmoid_fwd"],
                extra_cflags=["-O3", "-fopenmp"],
                extra_ldflags=["-fopenmp"],
                verbose=False,
            )
        fn = cls._ext.sigmoid_fwd
        return lambda t: fn(t, 4096)

    def __init__(self):
        super().__init__()
        self._op = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self._op is None:
            self._op = self._get_op()
        return self._op(x)
