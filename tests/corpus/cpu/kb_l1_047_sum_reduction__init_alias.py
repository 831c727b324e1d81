# corpus: problem=kb_l1_047_sum_reduction device=cpu expect=accepted policy=both
# style: self.reduce = ext.sum_dim in __init__; host code multiplies sizes into outer/inner extents
# class: 1, 3
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <vector>

// Sum over one dimension of a contiguous tensor, seen as (outer, reduced, inner).
static void split_dims(const torch::Tensor& x, int64_t dim, int64_t& outer, int64_t& reduced, int64_t& inner) {
    TORCH_CHECK(dim >= 0 && dim < x.dim(), "sum reduction: dim ", dim, " out of range for ", x.dim(), " dims");
    outer = 1;
    inner = 1;
    for (int64_t d = 0; d < dim; ++d) outer *= x.size(d);
    for (int64_t d = dim + 1; d < x.dim(); ++d) inner *= x.size(d);
    reduced = x.size(dim);
}

static void sum_kernel(const float* src, float* dst, int64_t outer, int64_t reduced, int64_t inner) {
    at::parallel_for(0, outer, 1, [&](int64_t o0, int64_t o1) {
        for (int64_t o = o0; o < o1; ++o) {
            float* out_row = dst + o * inner;
            for (int64_t i = 0; i < inner; ++i) out_row[i] = 0.0f;
            for (int64_t r = 0; r < reduced; ++r) {
                const float* in_row = src + (o * reduced + r) * inner;
                for (int64_t i = 0; i < inner; ++i) out_row[i] += in_row[i];
            }
        }
    });
}

// How many floats the result of reducing `dim` holds: callers size their output buffer with it.
int64_t reduce_scratch_elems(torch::Tensor x, int64_t dim) {
    int64_t outer, reduced, inner;
    split_dims(x, dim, outer, reduced, inner);
    return outer * inner;
}

void sum_dim_into(torch::Tensor x, int64_t dim, torch::Tensor out) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && out.scalar_type() == torch::kFloat32, "sum_dim_into: float32");
    TORCH_CHECK(out.is_contiguous(), "sum_dim_into: out must be contiguous");
    auto xc = x.contiguous();
    int64_t outer, reduced, inner;
    split_dims(xc, dim, outer, reduced, inner);
    TORCH_CHECK(out.numel() == outer * inner, "sum_dim_into: out holds ", out.numel(), ", needs ", outer * inner);
    sum_kernel(xc.data_ptr<float>(), out.data_ptr<float>(), outer, reduced, inner);
}

torch::Tensor sum_dim(torch::Tensor x, int64_t dim) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "sum_dim: float32 only");
    auto xc = x.contiguous();
    int64_t outer, reduced, inner;
    split_dims(xc, dim, outer, reduced, inner);
    std::vector<int64_t> shape(xc.sizes().begin(), xc.sizes().end());
    shape[dim] = 1;
    auto out = torch::empty(shape, xc.options());
    sum_kernel(xc.data_ptr<float>(), out.data_ptr<float>(), outer, reduced, inner);
    return out;
}
"""

sum_module = load_inline(
    name="corpus_sum_reduce_cpu",
    cpp_sources=cpp_source,
    functions=["reduce_scratch_elems", "sum_dim_into", "sum_dim"],
    extra_cflags=["-O3"],
    verbose=True,
)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim
        self.reduce = sum_module.sum_dim

    def forward(self, x):
        return self.reduce(x, self.dim)
