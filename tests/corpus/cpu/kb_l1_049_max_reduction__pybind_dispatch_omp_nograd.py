# corpus: problem=kb_l1_049_max_reduction device=cpu expect=accepted policy=both
# style: PYBIND11_MODULE in the source; AT_DISPATCH_FLOATING_TYPES; #pragma omp with -fopenmp; @torch.no_grad() forward; any reduction dim (blind round 8)
# class: 1, 2
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

batch_size = 128
dim1 = 4096
dim2 = 4095
reduce_dim = 1

max_reduce_src = r"""
#include <torch/extension.h>
#include <omp.h>
#include <algorithm>
#include <vector>

// keep NaN like torch.max does
template <typename scalar_t>
static inline scalar_t take_max(scalar_t acc, scalar_t v) {
    return (v > acc || v != v) ? v : acc;
}

template <typename scalar_t>
static void max_over_dim(const scalar_t* __restrict in, scalar_t* __restrict out,
                         int64_t outer, int64_t R, int64_t inner) {
    if (inner == 1) {
        // reduction over the contiguous last dim: one row per iteration
#pragma omp parallel for schedule(static)
        for (int64_t o = 0; o < outer; ++o) {
            const scalar_t* row = in + o * R;
            scalar_t m = row[0];
            for (int64_t r = 1; r < R; ++r) m = take_max(m, row[r]);
            out[o] = m;
        }
        return;
    }
    // strided reduction: vectorise along the inner (contiguous) dim in column blocks
    constexpr int64_t CB = 1024;
    const int64_t nblk = (inner + CB - 1) / CB;
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t o = 0; o < outer; ++o) {
        for (int64_t cb = 0; cb < nblk; ++cb) {
            const int64_t c0 = cb * CB, c1 = std::min(inner, c0 + CB);
            const scalar_t* base = in + o * R * inner;
            scalar_t* dst = out + o * inner;
            for (int64_t c = c0; c < c1; ++c) dst[c] = base[c];
            for (int64_t r = 1; r < R; ++r) {
                const scalar_t* src = base + r * inner;
                for (int64_t c = c0; c < c1; ++c) dst[c] = take_max(dst[c], src[c]);
            }
        }
    }
}

torch::Tensor max_reduce(torch::Tensor x, int64_t dim) {
    TORCH_CHECK(x.dim() >= 1, "max_reduce: need at least 1-D input");
    if (dim < 0) dim += x.dim();
    TORCH_CHECK(dim >= 0 && dim < x.dim(), "max_reduce: dim out of range");
    TORCH_CHECK(x.size(dim) > 0, "max_reduce: cannot reduce an empty dimension");
    auto xc = x.contiguous();
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < dim; ++i) outer *= xc.size(i);
    for (int64_t i = dim + 1; i < xc.dim(); ++i) inner *= xc.size(i);
    const int64_t R = xc.size(dim);
    std::vector<int64_t> oshape;
    for (int64_t i = 0; i < xc.dim(); ++i) if (i != dim) oshape.push_back(xc.size(i));
    auto out = torch::empty(oshape, xc.options());
    AT_DISPATCH_FLOATING_TYPES(xc.scalar_type(), "max_reduce", [&] {
        max_over_dim<scalar_t>(xc.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(), outer, R, inner);
    });
    return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("max_reduce", &max_reduce, "max over one dimension (values only)", py::arg("x"), py::arg("dim"));
}
"""

max_ext = load_inline(
    name="kb_max_reduce_omp",
    cpp_sources=max_reduce_src,
    extra_cflags=["-O3", "-march=native", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    with_cuda=False,
    verbose=True,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    @torch.no_grad()
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return max_ext.max_reduce(x, self.dim)


def get_inputs():
    return [torch.randn(batch_size, dim1, dim2)]


def get_init_inputs():
    return [reduce_dim]
