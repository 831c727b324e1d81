# corpus: problem=kb_l2_014_gemm_divide_sum_scaling device=cpu expect=accepted policy=both
# style: dataclass config, a kernel returning a tuple unpacked in forward, weight columns summed first
# class: 1,7
from dataclasses import dataclass
from typing import Tuple

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_src = r"""
#include <torch/extension.h>
#include <tuple>
#include <vector>

// Fused  out[b] = scale * sum_h ( (x[b] . W[h]) / divisor ).
// Since the reduction over h is linear it is done first on the weight:
//     wsum[k] = sum_h W[h, k]
//     out[b]  = (scale / divisor) * sum_k x[b, k] * wsum[k]
// Returns (out of shape (B, 1), wsum of shape (K)).
std::tuple<torch::Tensor, torch::Tensor> gemm_div_sum_scale(torch::Tensor x, torch::Tensor weight,
                                                            double divisor, double scale) {
    TORCH_CHECK(x.device().is_cpu() && weight.device().is_cpu(), "CPU tensors expected");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32, "float32 expected");
    TORCH_CHECK(x.dim() == 2 && weight.dim() == 2, "x (B, K) and weight (H, K) expected");
    TORCH_CHECK(x.size(1) == weight.size(1), "in_features mismatch");
    auto xc = x.contiguous();
    auto wc = weight.contiguous();
    const int64_t B = xc.size(0), K = xc.size(1), H = wc.size(0);

    auto wsum = torch::empty({K}, wc.options());
    auto out = torch::empty({B, 1}, xc.options());
    const float* xp = xc.data_ptr<float>();
    const float* wp = wc.data_ptr<float>();
    float* sp = wsum.data_ptr<float>();
    float* op = out.data_ptr<float>();

    // Column sums of W, accumulated in double.
    std::vector<double> acc(K, 0.0);
    for (int64_t h = 0; h < H; ++h) {
        const float* row = wp + h * K;
        for (int64_t k = 0; k < K; ++k) acc[k] += row[k];
    }
    for (int64_t k = 0; k < K; ++k) sp[k] = static_cast<float>(acc[k]);

    const double factor = scale / divisor;
    for (int64_t b = 0; b < B; ++b) {
        const float* xr = xp + b * K;
        double dot = 0.0;
        for (int64_t k = 0; k < K; ++k) dot += static_cast<double>(xr[k]) * acc[k];
        op[b] = static_cast<float>(dot * factor);
    }
    return std::make_tuple(out, wsum);
}
"""

_ext = load_inline(
    name="kb_l2_014_gemm_divide_sum_scaling__dataclass_tuple",
    cpp_sources=cpp_src,
    functions=["gemm_div_sum_scale"],
    extra_cflags=["-O3"],
    verbose=False,
)


@dataclass(frozen=True)
class GemmSumConfig:
    input_size: int
    hidden_size: int
    scaling_factor: float
    divisor: float = 2.0


class ModelNew(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, scaling_factor: float) -> None:
        super().__init__()
        self.cfg = GemmSumConfig(input_size, hidden_size, float(scaling_factor))
        self.weight = nn.Parameter(torch.randn(hidden_size, input_size))
        self.scaling_factor = scaling_factor

    def _fused(self, x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        return _ext.gemm_div_sum_scale(x, self.weight, self.cfg.divisor, self.cfg.scaling_factor)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _weight_colsum = self._fused(x)
        return out
