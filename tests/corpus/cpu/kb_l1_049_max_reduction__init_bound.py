# corpus: problem=kb_l1_049_max_reduction device=cpu expect=accepted policy=both
# style: self.op = ext.max_reduce_dim bound in __init__; at::parallel_for over the outer rows
# class: 1,7
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

max_reduce_src = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <cmath>
#include <vector>

torch::Tensor max_reduce_dim(torch::Tensor x, int64_t dim) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "expected float32 input");
    const int64_t nd = x.dim();
    TORCH_CHECK(nd > 0, "expected at least 1-D input");
    if (dim < 0) dim += nd;
    TORCH_CHECK(dim >= 0 && dim < nd, "dim out of range");
    TORCH_CHECK(x.size(dim) > 0, "cannot take max over an empty dimension");

    torch::Tensor xc = x.contiguous();
    const int64_t R = xc.size(dim);
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < dim; ++i) outer *= xc.size(i);
    for (int64_t i = dim + 1; i < nd; ++i) inner *= xc.size(i);

    std::vector<int64_t> shape;
    for (int64_t i = 0; i < nd; ++i) if (i != dim) shape.push_back(xc.size(i));
    torch::Tensor out = torch::empty(shape, xc.options());

    const float* src = xc.data_ptr<float>();
    float* dst = out.data_ptr<float>();

    at::parallel_for(0, outer, 1, [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o) {
            const float* base = src + o * R * inner;
            float* obase = dst + o * inner;
            for (int64_t i = 0; i < inner; ++i) obase[i] = base[i];
            for (int64_t r = 1; r < R; ++r) {
                const float* row = base + r * inner;
                for (int64_t i = 0; i < inner; ++i) {
                    const float v = row[i];
                    const float cur = obase[i];
                    // propagate NaN like torch.max
                    if (std::isnan(v) || v > cur) {
                        if (!std::isnan(cur)) obase[i] = v;
                    }
                }
            }
        }
    });
    return out;
}
"""

_max_ext = load_inline(
    name="kb_l1_049_max_reduction__init_bound",
    cpp_sources=max_reduce_src,
    functions=["max_reduce_dim"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim
        self.op = _max_ext.max_reduce_dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.op(x, self.dim)
