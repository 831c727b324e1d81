# corpus: problem=kb_l1_051_argmax device=cpu expect=accepted policy=both
# style: a module-level helper function calls the extension; OpenMP collapse(2); int64 output
# class: 2,7
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

argmax_source = r"""
#include <torch/extension.h>
#include <cmath>
#include <vector>

torch::Tensor argmax_dim_cpu(torch::Tensor input, int64_t dim) {
    TORCH_CHECK(input.is_cpu(), "argmax_dim_cpu: input must be on CPU");
    TORCH_CHECK(input.scalar_type() == torch::kFloat, "argmax_dim_cpu: input must be float32");
    const int64_t nd = input.dim();
    TORCH_CHECK(nd >= 1, "argmax_dim_cpu: input must have at least one dim");
    if (dim < 0) dim += nd;
    TORCH_CHECK(dim >= 0 && dim < nd, "argmax_dim_cpu: bad dim");
    TORCH_CHECK(input.size(dim) > 0, "argmax_dim_cpu: empty reduction dim");

    auto x = input.contiguous();
    const int64_t R = x.size(dim);
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < dim; ++i) outer *= x.size(i);
    for (int64_t i = dim + 1; i < nd; ++i) inner *= x.size(i);

    std::vector<int64_t> out_sizes;
    for (int64_t i = 0; i < nd; ++i) if (i != dim) out_sizes.push_back(x.size(i));
    auto idx = torch::empty(out_sizes, x.options().dtype(torch::kLong));

    const float* xp = x.data_ptr<float>();
    int64_t* ip = idx.data_ptr<int64_t>();

    #pragma omp parallel for collapse(2) schedule(static)
    for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
            const float* p = xp + o * R * inner + i;
            float best = p[0];
            int64_t best_idx = 0;
            if (!std::isnan(best)) {
                for (int64_t r = 1; r < R; ++r) {
                    const float v = p[r * inner];
                    if (std::isnan(v)) { best_idx = r; break; }  // NaN counts as the maximum
                    if (v > best) { best = v; best_idx = r; }     // strict '>' keeps the first max
                }
            }
            ip[o * inner + i] = best_idx;
        }
    }
    return idx;
}
"""

argmax_ext = load_inline(
    name="kb_l1_051_argmax__helper_fn",
    cpp_sources=argmax_source,
    functions=["argmax_dim_cpu"],
    extra_cflags=["-O3", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    verbose=False,
)


def custom_argmax(x: torch.Tensor, dim: int) -> torch.Tensor:
    if not x.is_contiguous():
        x = x.contiguous()
    return argmax_ext.argmax_dim_cpu(x, dim)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return custom_argmax(x, self.dim)
