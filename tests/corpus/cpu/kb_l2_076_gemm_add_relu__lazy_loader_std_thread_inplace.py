# corpus: problem=kb_l2_076_gemm_add_relu device=cpu expect=accepted policy=both
# style: module-level lazy loader (_ext = None); std::thread workers; in-place bias + ReLU epilogue (blind round 8)
# class: 1, 2
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

batch_size = 1024
in_features = 8192
out_features = 8192
bias_shape = (out_features,)

_SRC = r"""
#include <torch/extension.h>
#include <atomic>
#include <thread>
#include <vector>
#include <cstring>
#include <cstdlib>
#include <algorithm>

namespace {

typedef float vec16 __attribute__((vector_size(64)));
constexpr int kMR = 6;
constexpr int kNR = 32;
constexpr int kKC = 256;
constexpr int kMC = 96;
constexpr int kNC = 256;

inline void tile_6x32(int kc, const float* __restrict a, const float* __restrict b, float* __restrict out) {
    vec16 acc[kMR][2];
    for (int r = 0; r < kMR; ++r) { acc[r][0] = (vec16){}; acc[r][1] = (vec16){}; }
    for (int k = 0; k < kc; ++k) {
        vec16 b0, b1;
        std::memcpy(&b0, b + k * kNR, 64);
        std::memcpy(&b1, b + k * kNR + 16, 64);
#pragma GCC unroll 6
        for (int r = 0; r < kMR; ++r) {
            const float s = a[k * kMR + r];
            acc[r][0] += s * b0;
            acc[r][1] += s * b1;
        }
    }
    for (int r = 0; r < kMR; ++r) {
        std::memcpy(out + r * kNR, &acc[r][0], 64);
        std::memcpy(out + r * kNR + 16, &acc[r][1], 64);
    }
}

int num_workers() {
    unsigned hc = std::thread::hardware_concurrency();
    return hc == 0 ? 1 : (int)hc;
}

}  // namespace

// y = x @ w^T     x: (M, K)   w: (N, K)   (nn.Linear layout, no bias)
torch::Tensor gemm_nt(torch::Tensor x, torch::Tensor w) {
    TORCH_CHECK(x.dim() == 2 && w.dim() == 2, "gemm_nt expects 2-D tensors");
    TORCH_CHECK(x.size(1) == w.size(1), "gemm_nt: K mismatch");
    TORCH_CHECK(x.dtype() == torch::kFloat32 && w.dtype() == torch::kFloat32, "gemm_nt: float32 only");
    auto xc = x.contiguous();
    auto wc = w.contiguous();
    const int64_t M = xc.size(0), K = xc.size(1), N = wc.size(0);
    auto y = torch::empty({M, N}, xc.options());
    const float* A = xc.data_ptr<float>();
    const float* B = wc.data_ptr<float>();
    float* C = y.data_ptr<float>();

    const int64_t mt = (M + kMC - 1) / kMC, nt = (N + kNC - 1) / kNC;
    const int64_t ntiles = mt * nt;
    std::atomic<int64_t> next{0};

    auto worker = [&]() {
        float* Ap = static_cast<float*>(std::aligned_alloc(64, sizeof(float) * kMC * kKC));
        float* Bp = static_cast<float*>(std::aligned_alloc(64, sizeof(float) * kNC * kKC));
        alignas(64) float T[kMR * kNR];
        for (int64_t t = next.fetch_add(1); t < ntiles; t = next.fetch_add(1)) {
            const int64_t i0 = (t % mt) * kMC, j0 = (t / mt) * kNC;
            const int64_t mc = std::min<int64_t>(kMC, M - i0), nc = std::min<int64_t>(kNC, N - j0);
            for (int64_t k0 = 0; k0 < K; k0 += kKC) {
                const int kc = (int)std::min<int64_t>(kKC, K - k0);
                for (int64_t jp = 0; jp < nc; jp += kNR)
                    for (int jj = 0; jj < kNR; ++jj) {
                        float* d = Bp + jp * kc + jj;
                        const bool ok = jp + jj < nc;
                        const float* s = B + (j0 + jp + jj) * K + k0;
                        for (int kk = 0; kk < kc; ++kk) d[kk * kNR] = ok ? s[kk] : 0.f;
                    }
                for (int64_t ip = 0; ip < mc; ip += kMR)
                    for (int r = 0; r < kMR; ++r) {
                        float* d = Ap + ip * kc + r;
                        const bool ok = ip + r < mc;
                        const float* s = A + (i0 + ip + r) * K + k0;
                        for (int kk = 0; kk < kc; ++kk) d[kk * kMR] = ok ? s[kk] : 0.f;
                    }
                for (int64_t jp = 0; jp < nc; jp += kNR)
                    for (int64_t ip = 0; ip < mc; ip += kMR) {
                        tile_6x32(kc, Ap + ip * kc, Bp + jp * kc, T);
                        const int rows = (int)std::min<int64_t>(kMR, mc - ip);
                        const int cols = (int)std::min<int64_t>(kNR, nc - jp);
                        for (int r = 0; r < rows; ++r) {
                            float* c = C + (i0 + ip + r) * N + j0 + jp;
                            const float* s = T + r * kNR;
                            if (k0 == 0) for (int j = 0; j < cols; ++j) c[j] = s[j];
                            else         for (int j = 0; j < cols; ++j) c[j] += s[j];
                        }
                    }
            }
        }
        std::free(Ap);
        std::free(Bp);
    };

    const int nthreads = (int)std::min<int64_t>(num_workers(), ntiles);
    std::vector<std::thread> pool;
    for (int i = 1; i < nthreads; ++i) pool.emplace_back(worker);
    worker();
    for (auto& th : pool) th.join();
    return y;
}

// y <- relu(y + bias), in place, bias broadcast over rows
torch::Tensor bias_relu_(torch::Tensor y, torch::Tensor bias) {
    TORCH_CHECK(y.is_contiguous(), "bias_relu_: y must be contiguous");
    TORCH_CHECK(bias.numel() == y.size(-1), "bias_relu_: bias size mismatch");
    auto b = bias.contiguous();
    const int64_t N = y.size(-1), rows = y.numel() / N;
    float* py = y.data_ptr<float>();
    const float* pb = b.data_ptr<float>();
    const int nthreads = (int)std::max<int64_t>(1, std::min<int64_t>(num_workers(), rows));
    auto work = [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            float* row = py + r * N;
            for (int64_t j = 0; j < N; ++j) {
                const float v = row[j] + pb[j];
                row[j] = v > 0.f ? v : 0.f;
            }
        }
    };
    std::vector<std::thread> pool;
    const int64_t per = (rows + nthreads - 1) / nthreads;
    for (int i = 1; i < nthreads; ++i) {
        const int64_t r0 = i * per, r1 = std::min(rows, r0 + per);
        if (r0 < r1) pool.emplace_back(work, r0, r1);
    }
    work(0, std::min(rows, per));
    for (auto& th : pool) th.join();
    return y;
}
"""

_ext = None


def _get_ext():
    global _ext
    if _ext is None:
        _ext = load_inline(
            name="kb_gemm_bias_relu_threads",
            cpp_sources=_SRC,
            functions=["gemm_nt", "bias_relu_"],
            extra_cflags=["-O3", "-march=native", "-pthread"],
            extra_ldflags=["-pthread"],
            verbose=False,
        )
    return _ext


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int, bias_shape: tuple):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ext = _get_ext()
        y = ext.gemm_nt(x, self.gemm.weight)
        return ext.bias_relu_(y, self.bias)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, bias_shape]
