# corpus: problem=kb_l1_089_cumsum device=cpu expect=accepted policy=both
# style: at::parallel_for over the rows of any dim (strided walk of the scanned axis), a double running sum
# class: 7
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cumsum_cpp_source = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>

torch::Tensor cumsum_dim(torch::Tensor x, int64_t dim) {
    TORCH_CHECK(x.device().is_cpu(), "cumsum_dim: CPU only");
    TORCH_CHECK(x.scalar_type() == at::kFloat, "cumsum_dim: float32 only");
    const int64_t nd = x.dim();
    if (nd == 0) return x.clone();
    if (dim < 0) dim += nd;
    TORCH_CHECK(dim >= 0 && dim < nd, "cumsum_dim: dim out of range");

    auto in = x.contiguous();
    auto out = torch::empty_like(in);
    const int64_t L = in.size(dim);
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < dim; ++i) outer *= in.size(i);
    for (int64_t i = dim + 1; i < nd; ++i) inner *= in.size(i);

    const float* src = in.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    const int64_t lines = outer * inner;

    // one independent scan per (outer, inner) line; accumulate in double
    at::parallel_for(0, lines, 16, [&](int64_t begin, int64_t end) {
        for (int64_t line = begin; line < end; ++line) {
            const int64_t o = line / inner;
            const int64_t i = line % inner;
            const float* s = src + o * L * inner + i;
            float* d = dst + o * L * inner + i;
            double acc = 0.0;
            for (int64_t k = 0; k < L; ++k) {
                acc += static_cast<double>(s[k * inner]);
                d[k * inner] = static_cast<float>(acc);
            }
        }
    });
    return out;
}
"""

cumsum_ext = load_inline(
    name="kb_l1_089_cumsum__parallel_for",
    cpp_sources=cumsum_cpp_source,
    functions=["cumsum_dim"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    """Inclusive prefix sum using a custom at::parallel_for scan."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return cumsum_ext.cumsum_dim(x, self.dim)
