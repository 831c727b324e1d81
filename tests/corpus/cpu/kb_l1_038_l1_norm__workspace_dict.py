# corpus: problem=kb_l1_038_l1_norm device=cpu expect=accepted policy=both
# style: extension kept in a module-level dict and fetched by a helper; a row-sum workspace reused across calls
# class: 2,8
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

l1_src = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <cmath>

// pass 1: row sums of |x| into a caller-owned workspace
void row_abs_sum(torch::Tensor x, torch::Tensor ws) {
    TORCH_CHECK(x.dim() == 2 && x.is_contiguous(), "x must be contiguous 2D");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "float32 only");
    TORCH_CHECK(ws.is_contiguous() && ws.numel() >= x.size(0), "workspace too small");
    const int64_t R = x.size(0), D = x.size(1);
    const float* p = x.data_ptr<float>();
    float* w = ws.data_ptr<float>();
    at::parallel_for(0, R, 8, [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
            const float* row = p + r * D;
            float acc = 0.f;
            #pragma omp simd reduction(+:acc)
            for (int64_t d = 0; d < D; ++d) acc += std::fabs(row[d]);
            w[r] = acc;
        }
    });
}

// pass 2: out = x / rowsum
torch::Tensor row_divide(torch::Tensor x, torch::Tensor ws) {
    const int64_t R = x.size(0), D = x.size(1);
    auto out = torch::empty_like(x);
    const float* p = x.data_ptr<float>();
    const float* w = ws.data_ptr<float>();
    float* o = out.data_ptr<float>();
    at::parallel_for(0, R, 8, [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
            const float s = w[r];
            for (int64_t d = 0; d < D; ++d) o[r * D + d] = p[r * D + d] / s;
        }
    });
    return out;
}
"""

_EXT = {}


def _ext():
    if "l1" not in _EXT:
        _EXT["l1"] = load_inline(
            name="kb_l1_038_l1_norm__workspace_dict",
            cpp_sources=l1_src,
            functions=["row_abs_sum", "row_divide"],
            extra_cflags=["-O3", "-fopenmp"],
            extra_ldflags=["-fopenmp"],
            verbose=False,
        )
    return _EXT["l1"]


_ext()


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("_ws", torch.empty(0), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ext = _ext()
        x = x.contiguous()
        if self._ws.numel() < x.size(0):
            self._ws = torch.empty(x.size(0), dtype=torch.float32, device=x.device)
        ext.row_abs_sum(x, self._ws)
        return ext.row_divide(x, self._ws)
