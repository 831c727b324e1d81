# corpus: problem=kb_l1_048_mean_reduction device=cpu expect=accepted policy=both
# style: a small nn.Module wrapper used as a submodule; .accessor<float, 3>() over a (outer, dim, inner) view
# class: 2,7
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

mean_cpp = r"""
#include <torch/extension.h>
#include <vector>

// Mean over dimension `dim`. Input viewed as [outer, reduce, inner].
torch::Tensor mean_dim(torch::Tensor x, int64_t dim) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat, "mean_dim: float32 expected");
    TORCH_CHECK(x.dim() > 0, "mean_dim: need at least one dimension");
    const int64_t nd = x.dim();
    if (dim < 0) dim += nd;
    TORCH_CHECK(dim >= 0 && dim < nd, "mean_dim: dim out of range");

    auto xc = x.contiguous();
    const int64_t R = xc.size(dim);
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < dim; ++i) outer *= xc.size(i);
    for (int64_t i = dim + 1; i < nd; ++i) inner *= xc.size(i);

    std::vector<int64_t> out_shape;
    for (int64_t i = 0; i < nd; ++i) if (i != dim) out_shape.push_back(xc.size(i));
    auto out = torch::empty(out_shape, xc.options());

    auto in_view = xc.view({outer, R, inner});
    auto out_view = out.view({outer, inner});
    auto in3 = in_view.accessor<float, 3>();
    auto out2 = out_view.accessor<float, 2>();

    std::vector<double> acc(inner);
    for (int64_t o = 0; o < outer; ++o) {
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int64_t r = 0; r < R; ++r) {
            for (int64_t i = 0; i < inner; ++i) {
                acc[i] += in3[o][r][i];
            }
        }
        for (int64_t i = 0; i < inner; ++i) {
            out2[o][i] = static_cast<float>(acc[i] / static_cast<double>(R));
        }
    }
    return out;
}
"""

mean_ext = load_inline(
    name="kb_l1_048_mean_reduction__submodule",
    cpp_sources=mean_cpp,
    functions=["mean_dim"],
    extra_cflags=["-O3"],
    verbose=False,
)


class MeanReduce(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return mean_ext.mean_dim(x, self.dim)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim
        self.reduce = MeanReduce(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.reduce(x)
