# corpus: problem=kb_l2_099_matmul_gelu_softmax device=cpu expect=accepted policy=kernelbench
# style: F.linear, torch.split into row chunks, a fused GELU+softmax kernel per chunk, torch.cat
# class: 2,3
from typing import List

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

gelu_softmax_cpp = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <cmath>
#include <vector>

// Row-wise: out[r, :] = softmax(gelu(x[r, :])) with exact (erf) GELU.
torch::Tensor gelu_softmax_rows(const torch::Tensor& x) {
    TORCH_CHECK(x.device().is_cpu(), "gelu_softmax_rows: CPU tensor expected");
    TORCH_CHECK(x.dim() == 2, "gelu_softmax_rows: 2-D input expected");
    TORCH_CHECK(x.scalar_type() == torch::kFloat, "gelu_softmax_rows: float32 expected");
    auto xc = x.contiguous();
    const int64_t R = xc.size(0), C = xc.size(1);
    auto out = torch::empty_like(xc);
    const float* in = xc.data_ptr<float>();
    float* o = out.data_ptr<float>();

    at::parallel_for(0, R, 1, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const float* xr = in + r * C;
            float* orow = o + r * C;
            float mx = -INFINITY;
            for (int64_t c = 0; c < C; ++c) {
                const float v = xr[c];
                const float g = 0.5f * v * (1.0f + std::erf(v * 0.70710678118654752440f));
                orow[c] = g;
                mx = g > mx ? g : mx;
            }
            double sum = 0.0;
            for (int64_t c = 0; c < C; ++c) {
                const float e = std::exp(orow[c] - mx);
                orow[c] = e;
                sum += e;
            }
            const float inv = static_cast<float>(1.0 / sum);
            for (int64_t c = 0; c < C; ++c) orow[c] *= inv;
        }
    });
    return out;
}
"""

gelu_softmax = load_inline(
    name="kb_l2_099_matmul_gelu_softmax__split_cat",
    cpp_sources=gelu_softmax_cpp,
    functions=["gelu_softmax_rows"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    """Linear in PyTorch (BLAS); fused GELU + softmax in C++, applied over row chunks."""

    def __init__(self, in_features: int, out_features: int, rows_per_chunk: int = 16) -> None:
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.rows_per_chunk = rows_per_chunk

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.linear(x, self.linear.weight, self.linear.bias)
        # Process the batch in row chunks (keeps each chunk's rows hot in cache), then stitch back.
        pieces: List[torch.Tensor] = [gelu_softmax.gelu_softmax_rows(chunk)
                                      for chunk in torch.split(y, self.rows_per_chunk, dim=0)]
        return torch.cat(pieces, dim=0)
