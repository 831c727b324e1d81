# corpus: problem=kb_l1_088_mingpt_new_gelu device=cpu expect=accepted policy=both
# style: `#pragma omp parallel for` with -fopenmp, verbose=True, TORCH_CHECK; the extension function called directly
# class: 1
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

gelu_cpp = r"""
#include <torch/extension.h>
#include <cmath>
#include <omp.h>

// GPT-2's tanh approximation of GELU, one OpenMP loop over the flat buffer.
torch::Tensor new_gelu(torch::Tensor x) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "new_gelu: float32 input expected");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const float* src = xc.data_ptr<float>();
    float* dst = y.data_ptr<float>();
    const int64_t n = xc.numel();
    const float k0 = 0.7978845608028654f;  // sqrt(2 / pi)
    const float k1 = 0.044715f;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) {
        const float v = src[i];
        const float inner = k0 * (v + k1 * v * v * v);
        dst[i] = 0.5f * v * (1.0f + std::tanh(inner));
    }
    return y;
}
"""

gelu_ext = load_inline(
    name="corpus_new_gelu_omp",
    cpp_sources=gelu_cpp,
    functions=["new_gelu"],
    extra_cflags=["-O3", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    verbose=True,
)


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x):
        return gelu_ext.new_gelu(x)
