# corpus: problem=kb_l1_093_masked_cumsum device=cpu expect=accepted policy=both
# style: frozen @dataclass config, a __slots__ class whose __call__ runs functools.partial(helper, grain=...), a warnings.warn movedim fallback for a non-last dim and mask.to(bool) for a non-bool mask (metadata guards the problem's inputs never take), view for 1-D inputs, @torch.no_grad(), AT_DISPATCH_FLOATING_TYPES, at::parallel_for, double accumulator (blind round 13)
# class: 2, 7
import functools
import warnings
from dataclasses import dataclass

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
#include <torch/extension.h>
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>

template <typename scalar_t>
static void masked_cumsum_rows(const scalar_t* __restrict__ x,
                               const bool* __restrict__ mask,
                               scalar_t* __restrict__ out,
                               int64_t rows, int64_t len, int64_t grain) {
    at::parallel_for(0, rows, grain, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            const scalar_t* xr = x + r * len;
            const bool* mr = mask + r * len;
            scalar_t* orow = out + r * len;
            // accumulate in double like the CPU cumsum does for float
            double acc = 0.0;
            for (int64_t i = 0; i < len; ++i) {
                if (mr[i]) acc += static_cast<double>(xr[i]);
                orow[i] = static_cast<scalar_t>(acc);
            }
        }
    });
}

torch::Tensor masked_cumsum_lastdim(torch::Tensor x, torch::Tensor mask, int64_t grain) {
    TORCH_CHECK(!x.is_cuda(), "masked_cumsum_lastdim: CPU only");
    TORCH_CHECK(mask.scalar_type() == torch::kBool, "mask must be bool");
    TORCH_CHECK(x.sizes() == mask.sizes(), "x and mask must have the same shape");
    TORCH_CHECK(x.is_contiguous() && mask.is_contiguous(), "inputs must be contiguous");

    const int64_t len = x.dim() == 0 ? 1 : x.size(-1);
    const int64_t rows = len == 0 ? 0 : x.numel() / len;
    auto out = torch::empty_like(x);

    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "masked_cumsum_lastdim", [&] {
        masked_cumsum_rows<scalar_t>(x.data_ptr<scalar_t>(), mask.data_ptr<bool>(),
                                     out.data_ptr<scalar_t>(), rows, len, grain);
    });
    return out;
}
"""

_ext = load_inline(
    name="kb_l1_093_masked_cumsum__dataclass_partial_slots_dispatch_parallelfor_view",
    cpp_sources=cpp_source,
    functions=["masked_cumsum_lastdim"],
    extra_cflags=["-O3"],
    with_cuda=False,
    verbose=False,
)


def _masked_cumsum(x: torch.Tensor, mask: torch.Tensor, grain: int = 16) -> torch.Tensor:
    return _ext.masked_cumsum_lastdim(x, mask, grain)


@dataclass(frozen=True)
class ScanConfig:
    dim: int
    grain: int = 16  # rows per parallel task


class _RowScan:
    """Moves the scan dimension last, runs the kernel, moves it back."""

    __slots__ = ("cfg", "_kernel")

    def __init__(self, cfg: ScanConfig):
        self.cfg = cfg
        self._kernel = functools.partial(_masked_cumsum, grain=cfg.grain)

    def __call__(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        dim = self.cfg.dim % x.dim()
        if dim == x.dim() - 1:
            return self._kernel(x.contiguous(), mask.contiguous())
        warnings.warn("masked cumsum over a non-last dim: transposing through a copy")
        xt = x.movedim(dim, -1).contiguous()
        mt = mask.movedim(dim, -1).contiguous()
        return self._kernel(xt, mt).movedim(-1, dim)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super(ModelNew, self).__init__()
        self.dim = dim
        self.scan = _RowScan(ScanConfig(dim=dim))

    @torch.no_grad()
    def forward(self, x, mask):
        if mask.dtype != torch.bool:
            mask = mask.to(torch.bool)
        if x.dim() == 1:
            return self.scan(x.view(1, -1), mask.view(1, -1)).view(-1)
        return self.scan(x, mask)
