# corpus: problem=kb_l1_089_cumsum device=cpu expect=accepted policy=both
# style: module-level _ext = None lazy loader; AT_DISPATCH_FLOATING_TYPES template with acc_type; at::parallel_for with a grain size; any dim; __main__ self-test
# class: 2
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

batch_size = 32768
input_shape = (32768,)
dim = 1

CUMSUM_SRC = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <ATen/Dispatch.h>
#include <ATen/AccumulateType.h>

// x viewed as [outer, L, inner]; inclusive scan along L.
template <typename scalar_t>
void cumsum_kernel(const scalar_t* __restrict__ x, scalar_t* __restrict__ y,
                   int64_t outer, int64_t L, int64_t inner) {
    using acc_t = at::acc_type<scalar_t, /*is_cuda=*/false>;
    if (inner == 1) {
        // one row per outer index; rows are long, so a small grain size is enough
        at::parallel_for(0, outer, 16, [&](int64_t b, int64_t e) {
            for (int64_t o = b; o < e; ++o) {
                const scalar_t* src = x + o * L;
                scalar_t* dst = y + o * L;
                acc_t run = acc_t(0);
                for (int64_t i = 0; i < L; ++i) {
                    run += static_cast<acc_t>(src[i]);
                    dst[i] = static_cast<scalar_t>(run);
                }
            }
        });
    } else {
        // scan dimension is strided: walk it with a vector of running sums over `inner`
        at::parallel_for(0, outer, 1, [&](int64_t b, int64_t e) {
            std::vector<acc_t> run(inner);
            for (int64_t o = b; o < e; ++o) {
                std::fill(run.begin(), run.end(), acc_t(0));
                const scalar_t* src = x + o * L * inner;
                scalar_t* dst = y + o * L * inner;
                for (int64_t i = 0; i < L; ++i) {
                    for (int64_t j = 0; j < inner; ++j) {
                        run[j] += static_cast<acc_t>(src[i * inner + j]);
                        dst[i * inner + j] = static_cast<scalar_t>(run[j]);
                    }
                }
            }
        });
    }
}

torch::Tensor cumsum_forward(torch::Tensor x, int64_t dim) {
    TORCH_CHECK(x.device().is_cpu(), "cumsum_forward expects a CPU tensor");
    const int64_t nd = x.dim();
    if (nd == 0) return x.clone();
    if (dim < 0) dim += nd;
    TORCH_CHECK(dim >= 0 && dim < nd, "dim out of range");
    auto in = x.contiguous();
    auto out = torch::empty_like(in);
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < dim; ++d) outer *= in.size(d);
    for (int64_t d = dim + 1; d < nd; ++d) inner *= in.size(d);
    const int64_t L = in.size(dim);
    if (in.numel() == 0) return out;
    AT_DISPATCH_FLOATING_TYPES(in.scalar_type(), "cumsum_forward", [&] {
        cumsum_kernel<scalar_t>(in.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(), outer, L, inner);
    });
    return out;
}
"""

_ext = None


def _get_ext():
    global _ext
    if _ext is None:
        _ext = load_inline(
            name="kb_cumsum_parallel_for",
            cpp_sources=CUMSUM_SRC,
            functions=["cumsum_forward"],
            extra_cflags=["-O3"],
            with_cuda=False,
        )
    return _ext


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim
        self._cumsum = _get_ext().cumsum_forward

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._cumsum(x, self.dim)


def get_inputs():
    return [torch.rand(batch_size, *input_shape)]


def get_init_inputs():
    return [dim]


if __name__ == "__main__":
    torch.manual_seed(0)
    for shape, d in [((64, 1000), 1), ((64, 1000), 0), ((4, 5, 6), 1), ((4, 5, 6), -1), ((7,), 0)]:
        x = torch.rand(*shape)
        y = ModelNew(d)(x)
        ref = torch.cumsum(x, dim=d)
        print(shape, d, "max abs err:", (y - ref).abs().max().item(), torch.allclose(y, ref, rtol=1e-5, atol=1e-5))
    x = torch.rand(8, 4096, dtype=torch.float64)
    print("float64:", (ModelNew(1)(x) - torch.cumsum(x, 1)).abs().max().item())
