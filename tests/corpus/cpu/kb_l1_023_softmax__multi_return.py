# corpus: problem=kb_l1_023_softmax device=cpu expect=accepted policy=kernelbench
# style: the kernel returns two tensors (exponentials and row sums); PyTorch divides in place
# class: 3
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# The kernel does the max-subtract + exp pass and also returns the per-row
# normalisers; the final division happens on the Python side.
softmax_src = r"""
#include <torch/extension.h>
#include <vector>
#include <cmath>
#include <limits>

std::vector<torch::Tensor> exp_and_rowsum(torch::Tensor x) {
    TORCH_CHECK(x.dim() == 2, "expected (batch, dim)");
    TORCH_CHECK(x.scalar_type() == torch::kFloat, "float32 expected");
    auto xc = x.contiguous();
    const int64_t rows = xc.size(0), cols = xc.size(1);
    auto e = torch::empty_like(xc);
    auto s = torch::empty({rows, 1}, xc.options());
    const float* in = xc.data_ptr<float>();
    float* ep = e.data_ptr<float>();
    float* sp = s.data_ptr<float>();
    #pragma omp parallel for
    for (int64_t r = 0; r < rows; ++r) {
        const float* row = in + r * cols;
        float* erow = ep + r * cols;
        float m = -std::numeric_limits<float>::infinity();
        for (int64_t c = 0; c < cols; ++c) m = row[c] > m ? row[c] : m;
        double acc = 0.0;
        for (int64_t c = 0; c < cols; ++c) {
            const float v = std::exp(row[c] - m);
            erow[c] = v;
            acc += v;
        }
        sp[r] = (float)acc;
    }
    return {e, s};
}
"""

softmax_ext = load_inline(
    name="kb_l1_023_softmax__multi_return",
    cpp_sources=softmax_src,
    functions=["exp_and_rowsum"],
    extra_cflags=["-O3", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        e, s = softmax_ext.exp_and_rowsum(x)
        return e.div_(s)
