# corpus: problem=kb_l1_023_softmax device=cpu expect=accepted policy=both
# style: class ModelNew(Model), at::vec::Vectorized aliased as Vec (.exp()), a std::thread pool over rows
# class: 3, 7
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

softmax_source = r"""
#include <torch/extension.h>
#include <ATen/cpu/vec/vec.h>
#include <thread>
#include <vector>
#include <algorithm>
#include <cmath>
#include <limits>

using Vec = at::vec::Vectorized<float>;

static void softmax_rows(const float* in, float* out, int64_t row_begin, int64_t row_end, int64_t n) {
    const int64_t W = Vec::size();
    for (int64_t r = row_begin; r < row_end; ++r) {
        const float* x = in + r * n;
        float* y = out + r * n;

        // 1) row max
        float mx = -std::numeric_limits<float>::infinity();
        int64_t j = 0;
        if (n >= W) {
            Vec vmax = Vec::loadu(x);
            for (j = W; j + W <= n; j += W) vmax = at::vec::maximum(vmax, Vec::loadu(x + j));
            float tmp[Vec::size()];
            vmax.store(tmp);
            for (int64_t k = 0; k < W; ++k) mx = std::max(mx, tmp[k]);
        }
        for (; j < n; ++j) mx = std::max(mx, x[j]);

        // 2) exp(x - max), store, accumulate sum
        const Vec vmx(mx);
        Vec vsum(0.0f);
        j = 0;
        for (; j + W <= n; j += W) {
            Vec e = (Vec::loadu(x + j) - vmx).exp();
            e.store(y + j);
            vsum = vsum + e;
        }
        float tmp[Vec::size()];
        vsum.store(tmp);
        float sum = 0.0f;
        for (int64_t k = 0; k < W; ++k) sum += tmp[k];
        for (; j < n; ++j) {
            const float e = std::exp(x[j] - mx);
            y[j] = e;
            sum += e;
        }

        // 3) normalize
        const Vec vinv(1.0f / sum);
        j = 0;
        for (; j + W <= n; j += W) (Vec::loadu(y + j) * vinv).store(y + j);
        const float inv = 1.0f / sum;
        for (; j < n; ++j) y[j] *= inv;
    }
}

torch::Tensor softmax_lastdim(torch::Tensor x) {
    TORCH_CHECK(x.device().is_cpu(), "softmax_lastdim: expected a CPU tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "softmax_lastdim: expected float32");
    TORCH_CHECK(x.dim() == 2, "softmax_lastdim: expected a 2-D (batch, dim) tensor");
    x = x.contiguous();
    auto out = torch::empty_like(x);
    const int64_t rows = x.size(0);
    const int64_t n = x.size(1);
    if (rows == 0 || n == 0) return out;

    const float* in = x.data_ptr<float>();
    float* o = out.data_ptr<float>();

    unsigned hw = std::thread::hardware_concurrency();
    int64_t nthreads = std::max<int64_t>(1, std::min<int64_t>(hw ? hw : 1, rows));
    if (rows * n < 4096) nthreads = 1;   // not worth spawning threads for tiny inputs

    if (nthreads == 1) {
        softmax_rows(in, o, 0, rows, n);
        return out;
    }
    std::vector<std::thread> pool;
    pool.reserve(nthreads);
    const int64_t chunk = (rows + nthreads - 1) / nthreads;
    for (int64_t t = 0; t < nthreads; ++t) {
        const int64_t b = t * chunk;
        const int64_t e = std::min(rows, b + chunk);
        if (b >= e) break;
        pool.emplace_back(softmax_rows, in, o, b, e, n);
    }
    for (auto& th : pool) th.join();
    return out;
}
"""

softmax_ext = load_inline(
    name="kb_l1_023_softmax__vec_threads_inherit",
    cpp_sources=softmax_source,
    functions=["softmax_lastdim"],
    extra_cflags=["-O3", "-std=c++17"],
    extra_ldflags=["-lpthread"],
    verbose=False,
)


class Model(nn.Module):
    """Softmax over the last dimension of a (batch, dim) tensor."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


class ModelNew(Model):
    """Same constructor as Model; only forward is replaced by the custom kernel."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return softmax_ext.softmax_lastdim(x)


batch_size = 16
dim = 1025


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
