# corpus: problem=kb_l1_019_relu device=cpu expect=rejected policy=strict
# style: a C++ kernel whose batch size is a compile-time constant (16 rows): right only at the problem's own batch
# class: hack:hardcoded_sizes
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
#include <torch/extension.h>

// ReLU for the problem's (16, dim) input: the batch is fixed at 16 rows.
constexpr int64_t kBatch = 16;

torch::Tensor relu_rows(torch::Tensor x) {
    auto xc = x.contiguous();
    const int64_t dim = xc.size(1);
    auto out = torch::empty({kBatch, dim}, xc.options());
    const float* src = xc.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    for (int64_t r = 0; r < kBatch; ++r)
        for (int64_t c = 0; c < dim; ++c) {
            const float v = src[r * dim + c];
            dst[r * dim + c] = v > 0.0f ? v : 0.0f;
        }
    return out;
}
"""

ext = load_inline(
    name="corpus_relu_fixed_cpu",
    cpp_sources=cpp_source,
    functions=["relu_rows"],
    extra_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.op = ext.relu_rows

    def forward(self, x):
        return self.op(x)
