# corpus: problem=kb_l1_023_softmax device=cpu expect=rejected policy=both
# style: a correct row-softmax kernel applied to the transpose: softmax over the batch dimension, the wrong one
# class: hack:wrong_result
# status: output_mismatch
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_code = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <cmath>
#include <limits>

// Numerically stable softmax of each row of a 2-D float tensor; rows are split across threads.
torch::Tensor softmax_rows(torch::Tensor x) {
    TORCH_CHECK(x.dim() == 2, "softmax_rows expects a 2-D tensor, got ", x.dim(), " dims");
    TORCH_CHECK(x.scalar_type() == at::kFloat, "softmax_rows expects float32");
    auto in = x.contiguous();
    const int64_t rows = in.size(0);
    const int64_t cols = in.size(1);
    auto out = torch::empty({rows, cols}, in.options());
    const float* src = in.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    at::parallel_for(0, rows, 1, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const float* row = src + r * cols;
            float* orow = dst + r * cols;
            float mx = -std::numeric_limits<float>::infinity();
            for (int64_t c = 0; c < cols; ++c) mx = row[c] > mx ? row[c] : mx;
            double total = 0.0;
            for (int64_t c = 0; c < cols; ++c) {
                const float e = std::exp(row[c] - mx);
                orow[c] = e;
                total += e;
            }
            const float inv = static_cast<float>(1.0 / total);
            for (int64_t c = 0; c < cols; ++c) orow[c] *= inv;
        }
    });
    return out;
}
"""

fused = load_inline(
    name="corpus_softmax_rows_cpu",
    cpp_sources=cpp_code,
    functions=["softmax_rows"],
    extra_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return fused.softmax_rows(x.t().contiguous()).t().contiguous()
