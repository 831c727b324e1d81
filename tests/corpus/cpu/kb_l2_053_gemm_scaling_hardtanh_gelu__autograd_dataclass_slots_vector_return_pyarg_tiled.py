# corpus: problem=kb_l2_053_gemm_scaling_hardtanh_gelu device=cpu expect=accepted policy=both
# style: torch.autograd.Function (PyTorch in its backward only) taking a @dataclass(slots=True, frozen=True) config, pybind11 keyword arguments, std::vector<Tensor> return (output, pre-activation) unpacked, tiled GEMM in at::parallel_for with omp simd (-fopenmp-simd), erf GELU (blind round 13)
# class: 2, 7
from dataclasses import dataclass

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

batch_size = 2048
in_features = 8192
out_features = 8192
scaling_factor = 0.5
hardtanh_min = -2
hardtanh_max = 2

source = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <algorithm>
#include <cmath>
#include <vector>

namespace py = pybind11;

constexpr int64_t TILE_M = 16;
constexpr int64_t TILE_N = 64;

static inline float gelu_erf(float v) {
    return 0.5f * v * (1.0f + std::erf(v * 0.70710678118654752440f));
}

// Returns {out, pre} where pre = scale * (x @ w^T + b) (kept for backward)
// and out = gelu(hardtanh(pre, lo, hi)).
std::vector<torch::Tensor> gemm_scale_hardtanh_gelu(
        torch::Tensor x, torch::Tensor w, torch::Tensor b,
        double scale, double lo, double hi) {
    TORCH_CHECK(x.dim() == 2 && w.dim() == 2, "x: (M, K), w: (N, K)");
    TORCH_CHECK(x.size(1) == w.size(1), "inner dims differ");
    TORCH_CHECK(x.scalar_type() == torch::kFloat, "float32 only");
    x = x.contiguous();
    w = w.contiguous();
    b = b.contiguous();

    const int64_t M = x.size(0), K = x.size(1), N = w.size(0);
    auto pre = torch::empty({M, N}, x.options());
    auto out = torch::empty({M, N}, x.options());

    const float* xp = x.data_ptr<float>();
    const float* wp = w.data_ptr<float>();
    const float* bp = b.data_ptr<float>();
    float* pp = pre.data_ptr<float>();
    float* op = out.data_ptr<float>();
    const float s = static_cast<float>(scale);
    const float flo = static_cast<float>(lo);
    const float fhi = static_cast<float>(hi);

    const int64_t m_tiles = (M + TILE_M - 1) / TILE_M;
    const int64_t n_tiles = (N + TILE_N - 1) / TILE_N;

    at::parallel_for(0, m_tiles * n_tiles, 1, [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
            const int64_t m0 = (t / n_tiles) * TILE_M;
            const int64_t n0 = (t % n_tiles) * TILE_N;
            const int64_t m1 = std::min(M, m0 + TILE_M);
            const int64_t n1 = std::min(N, n0 + TILE_N);
            for (int64_t m = m0; m < m1; ++m) {
                const float* xr = xp + m * K;
                for (int64_t n = n0; n < n1; ++n) {
                    const float* wr = wp + n * K;
                    float acc = 0.0f;
                    #pragma omp simd reduction(+:acc)
                    for (int64_t k = 0; k < K; ++k) acc += xr[k] * wr[k];
                    const float z = (acc + bp[n]) * s;
                    pp[m * N + n] = z;
                    const float c = std::min(std::max(z, flo), fhi);
                    op[m * N + n] = gelu_erf(c);
                }
            }
        }
    });
    return {out, pre};
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("gemm_scale_hardtanh_gelu", &gemm_scale_hardtanh_gelu,
          py::arg("x"), py::arg("weight"), py::arg("bias"),
          py::arg("scale"), py::arg("lo"), py::arg("hi"));
}
"""

fused = load_inline(
    name="kb_l2_053_gemm_scaling_hardtanh_gelu__autograd_dataclass_slots_vector_return_pyarg_tiled",
    cpp_sources=source,
    extra_cflags=["-O3", "-march=native", "-fopenmp-simd"],
    verbose=False,
)


@dataclass(slots=True, frozen=True)
class EpilogueConfig:
    scale: float
    lo: float
    hi: float


class GemmHardtanhGELU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, cfg: EpilogueConfig):
        out, pre = fused.gemm_scale_hardtanh_gelu(
            x, weight, bias, scale=cfg.scale, lo=cfg.lo, hi=cfg.hi)
        ctx.save_for_backward(x, weight, pre)
        ctx.cfg = cfg
        return out

    @staticmethod
    def backward(ctx, grad_out):
        x, weight, pre = ctx.saved_tensors
        cfg = ctx.cfg
        c = pre.clamp(cfg.lo, cfg.hi)
        cdf = 0.5 * (1.0 + torch.erf(c * 0.7071067811865476))
        pdf = torch.exp(-0.5 * c * c) * 0.3989422804014327
        g = grad_out * (cdf + c * pdf)
        g = g * ((pre >= cfg.lo) & (pre <= cfg.hi)).to(g.dtype) * cfg.scale
        return g @ weight, g.t() @ x, g.sum(0), None


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scaling_factor, hardtanh_min, hardtanh_max):
        super(ModelNew, self).__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor
        self.cfg = EpilogueConfig(float(scaling_factor), float(hardtanh_min), float(hardtanh_max))

    def forward(self, x):
        return GemmHardtanhGELU.apply(x, self.gemm.weight, self.gemm.bias, self.cfg)
