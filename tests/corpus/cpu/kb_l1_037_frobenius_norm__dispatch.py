# corpus: problem=kb_l1_037_frobenius_norm device=cpu expect=accepted policy=both
# style: AT_DISPATCH_FLOATING_TYPES, OpenMP reduction(+) for the sum of squares then a parallel scale
# class: 7
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_src = r"""
#include <torch/extension.h>
#include <cmath>

template <typename scalar_t>
static void frob_normalize_impl(const scalar_t* __restrict__ in,
                                scalar_t* __restrict__ out,
                                int64_t n) {
    double ss = 0.0;
    #pragma omp parallel for reduction(+:ss) schedule(static)
    for (int64_t i = 0; i < n; ++i) {
        const double v = static_cast<double>(in[i]);
        ss += v * v;
    }
    const scalar_t norm = static_cast<scalar_t>(std::sqrt(ss));
    #pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) {
        out[i] = in[i] / norm;
    }
}

torch::Tensor frobenius_normalize(torch::Tensor x) {
    TORCH_CHECK(x.device().is_cpu(), "frobenius_normalize: CPU tensor expected");
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    AT_DISPATCH_FLOATING_TYPES(xc.scalar_type(), "frobenius_normalize", [&] {
        frob_normalize_impl<scalar_t>(xc.data_ptr<scalar_t>(),
                                      out.data_ptr<scalar_t>(),
                                      xc.numel());
    });
    return out;
}
"""

frob_module = load_inline(
    name="kb_l1_037_frobenius_norm__dispatch",
    cpp_sources=cpp_src,
    functions=["frobenius_normalize"],
    extra_cflags=["-O3", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    verbose=False,
)


class ModelNew(nn.Module):
    """x / ||x||_F with both the reduction and the scaling in one C++ extension."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return frob_module.frobenius_normalize(x)
