# corpus: problem=kb_l1_040_layer_norm device=cpu expect=accepted policy=both
# style: TORCH_LIBRARY schema + TORCH_LIBRARY_IMPL(CPU), torch.ops call; at::parallel_for over rows with a chunked mean/variance merge; keeps self.ln (blind round 8)
# class: 1, 2
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

batch_size = 16
features = 64
dim1 = 256
dim2 = 256

# LayerNorm over the trailing dims, registered as a real dispatcher op (torch.ops.kb_ln.layer_norm).
# Each normalized row is split into chunks processed with at::parallel_for; each chunk computes its
# own (count, mean, M2) in double with a two-pass loop and the chunks are merged with Chan's formula.
ln_source = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <torch/library.h>
#include <cmath>
#include <vector>

namespace {

struct Stats {
    double n = 0.0;
    double mean = 0.0;
    double m2 = 0.0;
};

inline Stats merge(const Stats& a, const Stats& b) {
    if (a.n == 0.0) return b;
    if (b.n == 0.0) return a;
    Stats r;
    r.n = a.n + b.n;
    const double delta = b.mean - a.mean;
    r.mean = a.mean + delta * (b.n / r.n);
    r.m2 = a.m2 + b.m2 + delta * delta * (a.n * b.n / r.n);
    return r;
}

constexpr int64_t kChunk = 16384;

}  // namespace

torch::Tensor layer_norm_fwd(const torch::Tensor& input, const torch::Tensor& weight,
                             const torch::Tensor& bias, double eps) {
    TORCH_CHECK(input.device().is_cpu(), "layer_norm_fwd: CPU tensors expected");
    TORCH_CHECK(input.scalar_type() == at::kFloat, "layer_norm_fwd: float32 expected");
    TORCH_CHECK(weight.numel() == bias.numel(), "weight/bias size mismatch");
    const int64_t N = weight.numel();
    TORCH_CHECK(N > 0 && input.numel() % N == 0, "normalized size does not divide the input");

    auto x = input.contiguous();
    auto w = weight.contiguous();
    auto b = bias.contiguous();
    auto y = torch::empty_like(x);
    const int64_t rows = x.numel() / N;
    const int64_t nchunks = (N + kChunk - 1) / kChunk;

    const float* px = x.data_ptr<float>();
    const float* pw = w.data_ptr<float>();
    const float* pb = b.data_ptr<float>();
    float* py = y.data_ptr<float>();

    std::vector<Stats> partial(rows * nchunks);

    // pass 1: per-chunk statistics, parallel over all (row, chunk) pairs
    at::parallel_for(0, rows * nchunks, 1, [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
            const int64_t r = t / nchunks, c = t % nchunks;
            const int64_t s = c * kChunk, e = std::min(N, s + kChunk);
            const float* xr = px + r * N;
            double sum = 0.0;
            for (int64_t i = s; i < e; ++i) sum += xr[i];
            const double n = double(e - s);
            const double mean = sum / n;
            double m2 = 0.0;
            for (int64_t i = s; i < e; ++i) {
                const double d = xr[i] - mean;
                m2 += d * d;
            }
            partial[t] = Stats{n, mean, m2};
        }
    });

    std::vector<float> row_mean(rows), row_rstd(rows);
    for (int64_t r = 0; r < rows; ++r) {
        Stats acc;
        for (int64_t c = 0; c < nchunks; ++c) acc = merge(acc, partial[r * nchunks + c]);
        const double var = acc.m2 / acc.n;  // biased variance, like nn.LayerNorm
        row_mean[r] = float(acc.mean);
        row_rstd[r] = float(1.0 / std::sqrt(var + eps));
    }

    // pass 2: normalize + affine
    at::parallel_for(0, rows * nchunks, 1, [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
            const int64_t r = t / nchunks, c = t % nchunks;
            const int64_t s = c * kChunk, e = std::min(N, s + kChunk);
            const float m = row_mean[r], rs = row_rstd[r];
            const float* xr = px + r * N;
            float* yr = py + r * N;
            for (int64_t i = s; i < e; ++i) yr[i] = (xr[i] - m) * rs * pw[i] + pb[i];
        }
    });
    return y;
}

TORCH_LIBRARY(kb_ln, m) {
    m.def("layer_norm(Tensor input, Tensor weight, Tensor bias, float eps) -> Tensor");
}

TORCH_LIBRARY_IMPL(kb_ln, CPU, m) {
    m.impl("layer_norm", &layer_norm_fwd);
}
"""

load_inline(
    name="kb_ln_torchlib",
    cpp_sources=ln_source,
    extra_cflags=["-O3", "-march=native"],
    is_python_module=False,
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, normalized_shape: tuple):
        super().__init__()
        # same parameters (and init) as the reference nn.LayerNorm
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.ops.kb_ln.layer_norm(x, self.ln.weight, self.ln.bias, self.ln.eps)


def get_inputs():
    return [torch.randn(batch_size, features, dim1, dim2)]


def get_init_inputs():
    return [(features, dim1, dim2)]
