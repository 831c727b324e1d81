# corpus: problem=kb_l1_047_sum_reduction device=cpu expect=accepted policy=both
# style: reduces over the input's strides for any dim without a contiguous copy; called through a lambda
# class: 1
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Reduces directly over the input's strides (no .contiguous() copy), for any dim.
sum_src = r"""
#include <torch/extension.h>
#include <vector>

torch::Tensor strided_sum_keepdim(torch::Tensor x, int64_t dim) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "float32 only");
    const int64_t nd = x.dim();
    TORCH_CHECK(nd >= 1, "need at least one dim");
    if (dim < 0) dim += nd;
    TORCH_CHECK(dim >= 0 && dim < nd, "dim out of range");

    std::vector<int64_t> out_sizes(x.sizes().begin(), x.sizes().end());
    out_sizes[dim] = 1;
    auto out = torch::empty(out_sizes, x.options());

    // iterate over all output positions; compute input offset from strides
    std::vector<int64_t> other_sizes, other_strides;
    for (int64_t d = 0; d < nd; ++d) {
        if (d == dim) continue;
        other_sizes.push_back(x.size(d));
        other_strides.push_back(x.stride(d));
    }
    const int64_t R = x.size(dim), rs = x.stride(dim);
    const int64_t n_out = out.numel();
    const float* p = x.data_ptr<float>();
    float* o = out.data_ptr<float>();
    const int64_t no = (int64_t)other_sizes.size();

    #pragma omp parallel for
    for (int64_t idx = 0; idx < n_out; ++idx) {
        int64_t rem = idx, off = 0;
        for (int64_t k = no - 1; k >= 0; --k) {
            const int64_t c = rem % other_sizes[k];
            rem /= other_sizes[k];
            off += c * other_strides[k];
        }
        float acc = 0.f;
        for (int64_t r = 0; r < R; ++r) acc += p[off + r * rs];
        o[idx] = acc;
    }
    return out;
}
"""

sum_ext = load_inline(
    name="kb_l1_047_sum_reduction__strided_lambda",
    cpp_sources=sum_src,
    functions=["strided_sum_keepdim"],
    extra_cflags=["-O3", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim
        self.reduce = lambda t: sum_ext.strided_sum_keepdim(t, self.dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.reduce(x)
