# corpus: problem=kb_l1_090_cumprod device=cpu expect=accepted policy=both
# style: functools.lru_cache loader, a @dataclass config, the kernel called per chunk in a list comprehension then torch.cat (blind round 12)
# class: 2
import functools
import math
from dataclasses import dataclass

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# torch.cumprod(x, dim) as a CPU C++ scan kernel. The input is viewed as
# (outer, length, inner); the scan runs over `length`, accumulating in double
# like PyTorch's CPU kernel does for float.

_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <algorithm>
#include <vector>

template <typename scalar_t>
static void cumprod_kernel(const scalar_t* __restrict__ in, scalar_t* __restrict__ out,
                           int64_t outer, int64_t length, int64_t inner, int64_t grain) {
    if (inner == 1) {
        at::parallel_for(0, outer, grain, [&](int64_t b, int64_t e) {
            for (int64_t o = b; o < e; ++o) {
                const scalar_t* src = in + o * length;
                scalar_t* dst = out + o * length;
                double acc = 1.0;
                for (int64_t l = 0; l < length; ++l) {
                    acc *= static_cast<double>(src[l]);
                    dst[l] = static_cast<scalar_t>(acc);
                }
            }
        });
    } else {
        at::parallel_for(0, outer, grain, [&](int64_t b, int64_t e) {
            std::vector<double> acc(inner);
            for (int64_t o = b; o < e; ++o) {
                std::fill(acc.begin(), acc.end(), 1.0);
                for (int64_t l = 0; l < length; ++l) {
                    const scalar_t* src = in + (o * length + l) * inner;
                    scalar_t* dst = out + (o * length + l) * inner;
                    for (int64_t i = 0; i < inner; ++i) {
                        acc[i] *= static_cast<double>(src[i]);
                        dst[i] = static_cast<scalar_t>(acc[i]);
                    }
                }
            }
        });
    }
}

torch::Tensor cumprod_3d(torch::Tensor x, int64_t grain) {
    TORCH_CHECK(!x.is_cuda(), "cumprod_3d: CPU tensor expected");
    TORCH_CHECK(x.dim() == 3, "cumprod_3d: expected (outer, length, inner)");
    TORCH_CHECK(grain >= 1, "cumprod_3d: grain must be >= 1");
    x = x.contiguous();
    auto out = torch::empty_like(x);
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "cumprod_3d", [&] {
        cumprod_kernel<scalar_t>(x.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(),
                                 x.size(0), x.size(1), x.size(2), grain);
    });
    return out;
}
"""


@functools.lru_cache(maxsize=None)
def _load_ext():
    return load_inline(
        name="kb_cumprod_scan",
        cpp_sources=_SOURCE,
        functions=["cumprod_3d"],
        extra_cflags=["-O3"],
        with_cuda=False,
        verbose=False,
    )


@dataclass(frozen=True)
class ScanConfig:
    dim: int
    rows_per_chunk: int = 4096   # outer rows handed to one kernel call
    grain: int = 16              # at::parallel_for grain size inside a call


def cumprod_chunked(x: torch.Tensor, cfg: ScanConfig) -> torch.Tensor:
    ext = _load_ext()
    d = cfg.dim % x.dim()
    outer = math.prod(x.shape[:d])
    length = x.shape[d]
    inner = math.prod(x.shape[d + 1:])
    x3 = x.contiguous().view(outer, length, inner)
    if outer == 0:
        return x.clone()
    parts = [ext.cumprod_3d(chunk, cfg.grain) for chunk in x3.split(cfg.rows_per_chunk, dim=0)]
    return torch.cat(parts, dim=0).view(x.shape)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super(ModelNew, self).__init__()
        self.dim = dim
        self.cfg = ScanConfig(dim=dim)
        _load_ext()

    def forward(self, x):
        return cumprod_chunked(x, self.cfg)


batch_size = 32768
input_shape = (32768,)
dim = 1


def get_inputs():
    return [torch.rand(batch_size, *input_shape)]


def get_init_inputs():
    return [dim]


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.rand(9, 7, 5) * 2.0
    for d in (0, 1, 2, -1):
        got = cumprod_chunked(x, ScanConfig(dim=d, rows_per_chunk=2))
        print(d, (got - torch.cumprod(x, d)).abs().max().item())
