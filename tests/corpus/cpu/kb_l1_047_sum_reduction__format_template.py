# corpus: problem=kb_l1_047_sum_reduction device=cpu expect=accepted policy=both
# style: str.format templated source, cuda_sources="" and with_cuda=False
# class: 7
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# C++ source is generated from a template: scalar / accumulator types and the
# unroll factor of the inner reduction loop are filled in with str.format.
_SUM_TEMPLATE = r"""
#include <torch/extension.h>
#include <vector>

// x viewed as (outer, R, inner); result (outer, 1, inner) -> reshaped by caller.
torch::Tensor sum_dim_keepdim(torch::Tensor x, int64_t dim) {{
    TORCH_CHECK(x.device().is_cpu(), "sum_dim_keepdim: CPU only");
    TORCH_CHECK(x.scalar_type() == {torch_dtype}, "sum_dim_keepdim: wrong dtype");
    const int64_t nd = x.dim();
    TORCH_CHECK(nd > 0, "sum_dim_keepdim: scalar input");
    if (dim < 0) dim += nd;
    TORCH_CHECK(dim >= 0 && dim < nd, "sum_dim_keepdim: dim out of range");
    x = x.contiguous();

    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < dim; ++d) outer *= x.size(d);
    for (int64_t d = dim + 1; d < nd; ++d) inner *= x.size(d);
    const int64_t R = x.size(dim);

    std::vector<int64_t> out_shape(x.sizes().begin(), x.sizes().end());
    out_shape[dim] = 1;
    auto out = torch::empty(out_shape, x.options());
    if (out.numel() == 0) return out;

    const {scalar_t}* src = x.data_ptr<{scalar_t}>();
    {scalar_t}* dst = out.data_ptr<{scalar_t}>();

    #pragma omp parallel for schedule(static)
    for (int64_t o = 0; o < outer; ++o) {{
        const {scalar_t}* base = src + o * R * inner;
        {scalar_t}* ob = dst + o * inner;
        std::vector<{acc_t}> acc(inner, ({acc_t})0);
        int64_t r = 0;
        for (; r + {UNROLL} <= R; r += {UNROLL}) {{
            for (int64_t u = 0; u < {UNROLL}; ++u) {{
                const {scalar_t}* row = base + (r + u) * inner;
                for (int64_t i = 0; i < inner; ++i) acc[i] += ({acc_t})row[i];
            }}
        }}
        for (; r < R; ++r) {{
            const {scalar_t}* row = base + r * inner;
            for (int64_t i = 0; i < inner; ++i) acc[i] += ({acc_t})row[i];
        }}
        for (int64_t i = 0; i < inner; ++i) ob[i] = ({scalar_t})acc[i];
    }}
    return out;
}}
"""

_cpp_src = _SUM_TEMPLATE.format(
    scalar_t="float",
    acc_t="double",
    torch_dtype="torch::kFloat32",
    UNROLL=4,
)

sum_ext = load_inline(
    name="kb_l1_047_sum_reduction__format_template",
    cpp_sources=_cpp_src,
    cuda_sources="",
    functions=["sum_dim_keepdim"],
    extra_cflags=["-O3", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    with_cuda=False,
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return sum_ext.sum_dim_keepdim(x, self.dim)


batch_size = 16
dim1 = 33
dim2 = 33
reduce_dim = 1


def get_inputs():
    return [torch.randn(batch_size, dim1, dim2)]


def get_init_inputs():
    return [reduce_dim]
