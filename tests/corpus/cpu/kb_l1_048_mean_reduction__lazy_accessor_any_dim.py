# corpus: problem=kb_l1_048_mean_reduction device=cpu expect=accepted policy=both
# style: module-level _ext = None lazy loader, accessor<float,3>/<float,2>, any dim as an (outer, r, inner) view, at::parallel_for, double accumulator
# class: 2
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

batch_size = 128
dim1 = 4096
dim2 = 4095
reduce_dim = 1

_ext = None

_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <vector>

// x viewed as (outer, r, inner); returns (outer, inner) = mean over r.
torch::Tensor mean_3d(torch::Tensor x3) {
    TORCH_CHECK(x3.dim() == 3, "mean_3d expects a 3-D view");
    TORCH_CHECK(x3.scalar_type() == torch::kFloat32, "mean_3d: float32 only");
    const int64_t outer = x3.size(0), r = x3.size(1), inner = x3.size(2);
    auto out = torch::empty({outer, inner}, x3.options());
    auto in_a = x3.accessor<float, 3>();
    auto out_a = out.accessor<float, 2>();
    const double inv = r > 0 ? 1.0 / static_cast<double>(r) : std::numeric_limits<double>::quiet_NaN();

    at::parallel_for(0, outer, 1, [&](int64_t ob, int64_t oe) {
        std::vector<double> acc(inner);
        for (int64_t o = ob; o < oe; ++o) {
            std::fill(acc.begin(), acc.end(), 0.0);
            auto slab = in_a[o];
            for (int64_t j = 0; j < r; ++j) {
                auto row = slab[j];
                for (int64_t i = 0; i < inner; ++i) acc[i] += row[i];
            }
            auto orow = out_a[o];
            for (int64_t i = 0; i < inner; ++i) orow[i] = static_cast<float>(acc[i] * inv);
        }
    });
    return out;
}
"""


def _load():
    global _ext
    if _ext is None:
        _ext = load_inline(
            name="kb_mean_reduce_acc",
            cpp_sources=_SOURCE,
            functions=["mean_3d"],
            extra_cflags=["-O3"],
        )
    return _ext


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim
        _load()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        d = self.dim % x.dim()
        shape = list(x.shape)
        outer = 1
        for s in shape[:d]:
            outer *= s
        inner = 1
        for s in shape[d + 1:]:
            inner *= s
        x3 = x.contiguous().view(outer, shape[d], inner)
        out = _load().mean_3d(x3)
        return out.view(shape[:d] + shape[d + 1:])


def get_inputs():
    return [torch.randn(batch_size, dim1, dim2)]


def get_init_inputs():
    return [reduce_dim]
