# corpus: problem=kb_l2_086_matmul_divide_gelu device=cpu expect=accepted policy=both
# style: a dict of ops, hand-written PYBIND11_MODULE, reshape/view chain
# class: 1,7
import math
from typing import Callable, Dict

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = r"""
#include <torch/extension.h>
#include <cmath>
#include <omp.h>

// y = x @ w^T + b  (x: (M, K), w: (N, K), b: (N))
torch::Tensor linear(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
    TORCH_CHECK(x.device().is_cpu(), "linear: CPU only");
    TORCH_CHECK(x.scalar_type() == at::kFloat && w.scalar_type() == at::kFloat && b.scalar_type() == at::kFloat,
                "linear: float32 only");
    TORCH_CHECK(x.dim() == 2 && w.dim() == 2 && x.size(1) == w.size(1), "linear: shape mismatch");
    TORCH_CHECK(b.numel() == w.size(0), "linear: bias size mismatch");
    x = x.contiguous(); w = w.contiguous(); b = b.contiguous();
    const int64_t M = x.size(0), K = x.size(1), N = w.size(0);
    auto y = torch::empty({M, N}, x.options());
    const float* xp = x.data_ptr<float>();
    const float* wp = w.data_ptr<float>();
    const float* bp = b.data_ptr<float>();
    float* yp = y.data_ptr<float>();

    constexpr int64_t NB = 64;   // block of output features sharing one pass over x rows
    const int64_t nblocks = (N + NB - 1) / NB;
    #pragma omp parallel for schedule(static)
    for (int64_t blk = 0; blk < nblocks; ++blk) {
        const int64_t n0 = blk * NB, n1 = std::min<int64_t>(N, n0 + NB);
        for (int64_t m = 0; m < M; ++m) {
            const float* xr = xp + m * K;
            for (int64_t n = n0; n < n1; ++n) {
                const float* wr = wp + n * K;
                float acc = 0.f;
                #pragma omp simd reduction(+:acc)
                for (int64_t k = 0; k < K; ++k) acc += xr[k] * wr[k];
                yp[m * N + n] = acc + bp[n];
            }
        }
    }
    return y;
}

// In place: y = gelu(y / divisor), exact erf form.
torch::Tensor div_gelu_(torch::Tensor y, double divisor) {
    TORCH_CHECK(y.is_contiguous() && y.scalar_type() == at::kFloat, "div_gelu_: contiguous float32 expected");
    float* p = y.data_ptr<float>();
    const int64_t n = y.numel();
    const float inv = static_cast<float>(1.0 / divisor);
    const float rsqrt2 = 0.70710678118654752440f;
    #pragma omp parallel for if (n > 32768)
    for (int64_t i = 0; i < n; ++i) {
        const float v = p[i] * inv;
        p[i] = 0.5f * v * (1.0f + std::erf(v * rsqrt2));
    }
    return y;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("linear", &linear, "x @ w^T + b");
    m.def("div_gelu_", &div_gelu_, "in-place gelu(y / divisor)");
}
"""

ext = load_inline(
    name="kb_l2_086_matmul_divide_gelu__op_dict",
    cpp_sources=source,
    extra_cflags=["-O3", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, input_size: int, output_size: int, divisor: float) -> None:
        super().__init__()
        self.linear = nn.Linear(input_size, output_size)   # keeps the reference's parameters / init
        self.divisor = divisor
        self.ops: Dict[str, Callable[..., torch.Tensor]] = {
            "linear": ext.linear,
            "div_gelu": ext.div_gelu_,
        }

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        lead = x.shape[:-1]
        x2d = x.reshape(-1, x.shape[-1])
        y = self.ops["linear"](x2d, self.linear.weight, self.linear.bias)
        y = self.ops["div_gelu"](y, float(self.divisor))
        return y.view(*lead, y.shape[-1])
