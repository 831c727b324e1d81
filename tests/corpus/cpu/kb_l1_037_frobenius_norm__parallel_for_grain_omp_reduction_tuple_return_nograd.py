# corpus: problem=kb_l1_037_frobenius_norm device=cpu expect=accepted policy=both
# style: OpenMP parallel for reduction(+) in double over chunks with an inner omp simd reduction, at::parallel_for scale pass with a grain size, std::tuple<Tensor, Tensor> (y, norm) return with forward keeping y, 0-dim norm tensor filled through data_ptr, @torch.no_grad() (blind round 15)
# class: 7
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Frobenius-norm normalization: y = x / ||x||_F.
# Pass 1: sum of squares with an OpenMP reduction (double accumulator, per-chunk float
#         partials so the inner loop vectorizes).
# Pass 2: the scale, with at::parallel_for and an explicit grain size.
# The C++ op returns a tuple (y, norm); forward keeps y.

batch_size = 112
features = 64
dim1 = 512
dim2 = 512

cpp_source = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <cmath>
#include <algorithm>
#include <tuple>
#include <omp.h>

static constexpr int64_t CHUNK = 4096;          // elements per reduction chunk
static constexpr int64_t SCALE_GRAIN = 1 << 15; // elements per parallel_for task

static double sum_of_squares(const float* __restrict__ x, int64_t n) {
    const int64_t nchunks = (n + CHUNK - 1) / CHUNK;
    double total = 0.0;
    #pragma omp parallel for reduction(+:total) schedule(static)
    for (int64_t c = 0; c < nchunks; ++c) {
        const int64_t b = c * CHUNK;
        const int64_t e = std::min(n, b + CHUNK);
        float part = 0.f;
        #pragma omp simd reduction(+:part)
        for (int64_t i = b; i < e; ++i) part += x[i] * x[i];
        total += static_cast<double>(part);
    }
    return total;
}

std::tuple<torch::Tensor, torch::Tensor> frobenius_normalize(torch::Tensor x) {
    TORCH_CHECK(x.device().is_cpu(), "frobenius_normalize: CPU tensor expected");
    TORCH_CHECK(x.scalar_type() == torch::kFloat, "frobenius_normalize: float32 expected");
    auto xc = x.contiguous();
    const int64_t n = xc.numel();
    const float* xp = xc.data_ptr<float>();

    const float norm = static_cast<float>(std::sqrt(sum_of_squares(xp, n)));

    auto norm_t = torch::empty({}, xc.options());
    norm_t.data_ptr<float>()[0] = norm;

    auto y = torch::empty_like(xc);
    float* yp = y.data_ptr<float>();
    at::parallel_for(0, n, SCALE_GRAIN, [&](int64_t begin, int64_t end) {
        #pragma omp simd
        for (int64_t i = begin; i < end; ++i) yp[i] = xp[i] / norm;
    });
    return std::make_tuple(y, norm_t);
}
"""

frob = load_inline(
    name="kb_l1_037_frobenius_pf_ompred",
    cpp_sources=cpp_source,
    functions=["frobenius_normalize"],
    extra_cflags=["-O3", "-march=native", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    @torch.no_grad()
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y, _norm = frob.frobenius_normalize(x)
        return y


def get_inputs():
    x = torch.rand(batch_size, features, dim1, dim2)
    return [x]


def get_init_inputs():
    return []
