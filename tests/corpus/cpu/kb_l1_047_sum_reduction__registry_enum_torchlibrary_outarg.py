# corpus: problem=kb_l1_047_sum_reduction device=cpu expect=accepted policy=both
# style: a KERNELS dict filled by @register(...), an Enum choosing the variant, TORCH_LIBRARY ops with Tensor(a!) out args called through torch.ops (blind round 12)
# class: 2
import enum
import math

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Sum reduction over one dimension (keepdim=True) with hand-written CPU kernels.
# Two layouts are handled: the reduced dim is innermost ("rows") or it has a
# non-trivial inner extent ("strided"). Both accumulate in double.

_CPP_SRC = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <algorithm>
#include <vector>

namespace {

template <typename scalar_t>
void sum_rows_impl(const scalar_t* __restrict__ x, scalar_t* __restrict__ out,
                   int64_t outer, int64_t reduce) {
    at::parallel_for(0, outer, 1, [&](int64_t begin, int64_t end) {
        for (int64_t o = begin; o < end; ++o) {
            const scalar_t* row = x + o * reduce;
            double acc0 = 0.0, acc1 = 0.0, acc2 = 0.0, acc3 = 0.0;
            int64_t r = 0;
            for (; r + 4 <= reduce; r += 4) {
                acc0 += static_cast<double>(row[r + 0]);
                acc1 += static_cast<double>(row[r + 1]);
                acc2 += static_cast<double>(row[r + 2]);
                acc3 += static_cast<double>(row[r + 3]);
            }
            double s = (acc0 + acc1) + (acc2 + acc3);
            for (; r < reduce; ++r) s += static_cast<double>(row[r]);
            out[o] = static_cast<scalar_t>(s);
        }
    });
}

template <typename scalar_t>
void sum_strided_impl(const scalar_t* __restrict__ x, scalar_t* __restrict__ out,
                      int64_t outer, int64_t reduce, int64_t inner) {
    constexpr int64_t TILE = 1024;
    const int64_t ntiles = (inner + TILE - 1) / TILE;
    at::parallel_for(0, outer * ntiles, 1, [&](int64_t begin, int64_t end) {
        std::vector<double> acc(TILE);
        for (int64_t t = begin; t < end; ++t) {
            const int64_t o = t / ntiles;
            const int64_t i0 = (t % ntiles) * TILE;
            const int64_t n = std::min(TILE, inner - i0);
            std::fill(acc.begin(), acc.begin() + n, 0.0);
            const scalar_t* base = x + o * reduce * inner + i0;
            for (int64_t r = 0; r < reduce; ++r) {
                const scalar_t* p = base + r * inner;
                for (int64_t i = 0; i < n; ++i) acc[i] += static_cast<double>(p[i]);
            }
            scalar_t* dst = out + o * inner + i0;
            for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<scalar_t>(acc[i]);
        }
    });
}

}  // namespace

// x: (outer, reduce) contiguous, out: (outer,) contiguous
void sum_rows_out(const at::Tensor& x, at::Tensor& out) {
    TORCH_CHECK(x.device().is_cpu() && out.device().is_cpu(), "sum_rows_out: CPU tensors expected");
    TORCH_CHECK(x.dim() == 2, "sum_rows_out: x must be 2-D (outer, reduce)");
    TORCH_CHECK(x.is_contiguous() && out.is_contiguous(), "sum_rows_out: contiguous tensors expected");
    TORCH_CHECK(out.numel() == x.size(0), "sum_rows_out: out has wrong size");
    TORCH_CHECK(out.scalar_type() == x.scalar_type(), "sum_rows_out: dtype mismatch");
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "sum_rows_out", [&] {
        sum_rows_impl<scalar_t>(x.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(),
                                x.size(0), x.size(1));
    });
}

// x: (outer, reduce, inner) contiguous, out: (outer, inner) contiguous
void sum_strided_out(const at::Tensor& x, at::Tensor& out) {
    TORCH_CHECK(x.device().is_cpu() && out.device().is_cpu(), "sum_strided_out: CPU tensors expected");
    TORCH_CHECK(x.dim() == 3, "sum_strided_out: x must be 3-D (outer, reduce, inner)");
    TORCH_CHECK(x.is_contiguous() && out.is_contiguous(), "sum_strided_out: contiguous tensors expected");
    TORCH_CHECK(out.numel() == x.size(0) * x.size(2), "sum_strided_out: out has wrong size");
    TORCH_CHECK(out.scalar_type() == x.scalar_type(), "sum_strided_out: dtype mismatch");
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "sum_strided_out", [&] {
        sum_strided_impl<scalar_t>(x.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(),
                                   x.size(0), x.size(1), x.size(2));
    });
}

TORCH_LIBRARY(kb_sumreduce, m) {
    m.def("sum_rows_out(Tensor x, Tensor(a!) out) -> ()");
    m.def("sum_strided_out(Tensor x, Tensor(a!) out) -> ()");
}

TORCH_LIBRARY_IMPL(kb_sumreduce, CPU, m) {
    m.impl("sum_rows_out", &sum_rows_out);
    m.impl("sum_strided_out", &sum_strided_out);
}
"""

load_inline(
    name="kb_sumreduce_ops",
    cpp_sources=_CPP_SRC,
    is_python_module=False,
    extra_cflags=["-O3", "-march=native"],
    verbose=False,
)


class Layout(enum.Enum):
    ROWS = "rows"         # reduced dim is the innermost one
    STRIDED = "strided"   # there are elements after the reduced dim


KERNELS = {}


def register(name):
    def deco(fn):
        KERNELS[name] = fn
        return fn
    return deco


@register(Layout.ROWS)
def _sum_rows(x3, out2):
    torch.ops.kb_sumreduce.sum_rows_out(x3.view(x3.size(0), x3.size(1)), out2.view(-1))


@register(Layout.STRIDED)
def _sum_strided(x3, out2):
    torch.ops.kb_sumreduce.sum_strided_out(x3, out2)


class ModelNew(nn.Module):
    """torch.sum(x, dim, keepdim=True) with custom CPU kernels."""

    def __init__(self, dim: int):
        super(ModelNew, self).__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        d = self.dim % x.dim()
        outer = math.prod(x.shape[:d])
        reduce = x.shape[d]
        inner = math.prod(x.shape[d + 1:])

        out_shape = list(x.shape)
        out_shape[d] = 1
        out = torch.empty(out_shape, dtype=x.dtype, device=x.device)

        layout = Layout.ROWS if inner == 1 else Layout.STRIDED
        KERNELS[layout](x.view(outer, reduce, inner), out.view(outer, inner))
        return out


batch_size = 128
dim1 = 4096
dim2 = 4095
reduce_dim = 1


def get_inputs():
    x = torch.rand(batch_size, dim1, dim2)
    return [x]


def get_init_inputs():
    return [reduce_dim]


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.rand(4, 33, 17, 5)
    for d in (0, 1, 2, 3, -1):
        got = ModelNew(d)(x)
        ref = torch.sum(x, dim=d, keepdim=True)
        print(d, tuple(got.shape), (got - ref).abs().max().item())
