# corpus: problem=kb_l3_043_mingpt_causal_attention device=cpu expect=accepted policy=both
# style: std::vector<torch::Tensor> q/k/v return; #pragma omp; transposed K; causal softmax; the projections in C++ too (blind round 8)
# class: 1, 2
import math

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

batch_size = 128
max_seqlen = 1024
seq_len = 512
n_embd = 768
n_head = 8
attn_pdrop = 0.0
resid_pdrop = 0.0

attn_cpp = r"""
#include <torch/extension.h>
#include <omp.h>
#include <cmath>
#include <cstring>
#include <cstdlib>
#include <limits>
#include <vector>
#include <algorithm>

typedef float f16v __attribute__((vector_size(64)));
static constexpr int MR = 6, NR = 32, KC = 256, MC = 96, NC = 256;

static inline void ukernel(int kc, const float* __restrict ap, const float* __restrict bp, float* __restrict ct) {
    f16v acc[MR][2];
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) { acc[r][0] = (f16v){}; acc[r][1] = (f16v){}; }
    for (int k = 0; k < kc; ++k) {
        f16v b0, b1;
        std::memcpy(&b0, bp + k * NR, 64);
        std::memcpy(&b1, bp + k * NR + 16, 64);
#pragma GCC unroll 6
        for (int r = 0; r < MR; ++r) {
            const float a = ap[k * MR + r];
            acc[r][0] += a * b0;
            acc[r][1] += a * b1;
        }
    }
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) {
        std::memcpy(ct + r * NR, &acc[r][0], 64);
        std::memcpy(ct + r * NR + 16, &acc[r][1], 64);
    }
}

// nn.Linear: y[..., N] = x[..., K] @ W[N, K]^T + b[N]
torch::Tensor linear_fwd(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat, "float32 only");
    TORCH_CHECK(w.dim() == 2 && x.size(-1) == w.size(1), "linear_fwd: shape mismatch");
    TORCH_CHECK(b.numel() == w.size(0), "linear_fwd: bias mismatch");
    auto xc = x.contiguous();
    auto wc = w.contiguous();
    auto bc = b.contiguous();
    const int64_t K = w.size(1), N = w.size(0), M = xc.numel() / K;
    std::vector<int64_t> oshape(x.sizes().begin(), x.sizes().end());
    oshape.back() = N;
    auto y = torch::empty(oshape, xc.options());
    const float* A = xc.data_ptr<float>();
    const float* B = wc.data_ptr<float>();
    const float* bias = bc.data_ptr<float>();
    float* C = y.data_ptr<float>();
    const int64_t mt = (M + MC - 1) / MC, nt = (N + NC - 1) / NC;
#pragma omp parallel
    {
        float* ap = static_cast<float*>(std::aligned_alloc(64, sizeof(float) * MC * KC));
        float* bp = static_cast<float*>(std::aligned_alloc(64, sizeof(float) * NC * KC));
        alignas(64) float ct[MR * NR];
#pragma omp for schedule(dynamic, 1)
        for (int64_t t = 0; t < mt * nt; ++t) {
            const int64_t i0 = (t / nt) * MC, j0 = (t % nt) * NC;
            const int64_t mc = std::min<int64_t>(MC, M - i0), nc = std::min<int64_t>(NC, N - j0);
            for (int64_t k0 = 0; k0 < K; k0 += KC) {
                const int kc = (int)std::min<int64_t>(KC, K - k0);
                const bool last = k0 + KC >= K;
                for (int64_t jp = 0; jp < nc; jp += NR)
                    for (int jj = 0; jj < NR; ++jj) {
                        float* d = bp + jp * kc + jj;
                        if (jp + jj < nc) { const float* s = B + (j0 + jp + jj) * K + k0; for (int kk = 0; kk < kc; ++kk) d[kk * NR] = s[kk]; }
                        else for (int kk = 0; kk < kc; ++kk) d[kk * NR] = 0.f;
                    }
                for (int64_t ip = 0; ip < mc; ip += MR)
                    for (int r = 0; r < MR; ++r) {
                        float* d = ap + ip * kc + r;
                        if (ip + r < mc) { const float* s = A + (i0 + ip + r) * K + k0; for (int kk = 0; kk < kc; ++kk) d[kk * MR] = s[kk]; }
                        else for (int kk = 0; kk < kc; ++kk) d[kk * MR] = 0.f;
                    }
                for (int64_t jp = 0; jp < nc; jp += NR)
                    for (int64_t ip = 0; ip < mc; ip += MR) {
                        ukernel(kc, ap + ip * kc, bp + jp * kc, ct);
                        const int rows = (int)std::min<int64_t>(MR, mc - ip), cols = (int)std::min<int64_t>(NR, nc - jp);
                        for (int r = 0; r < rows; ++r) {
                            float* crow = C + (i0 + ip + r) * N + j0 + jp;
                            const float* s = ct + r * NR;
                            for (int j = 0; j < cols; ++j) {
                                float v = (k0 == 0 ? 0.f : crow[j]) + s[j];
                                if (last) v += bias[j0 + jp + j];
                                crow[j] = v;
                            }
                        }
                    }
            }
        }
        std::free(ap);
        std::free(bp);
    }
    return y;
}

// qkv: (B, T, 3C) -> {q, k, v}, each (B, H, T, D) contiguous
std::vector<torch::Tensor> split_heads(torch::Tensor qkv, int64_t n_head) {
    TORCH_CHECK(qkv.dim() == 3 && qkv.size(2) % (3 * n_head) == 0, "split_heads: bad shape");
    auto src = qkv.contiguous();
    const int64_t B = src.size(0), T = src.size(1), C = src.size(2) / 3, H = n_head, D = C / H;
    auto q = torch::empty({B, H, T, D}, src.options());
    auto k = torch::empty({B, H, T, D}, src.options());
    auto v = torch::empty({B, H, T, D}, src.options());
    const float* ps = src.data_ptr<float>();
    float* dst[3] = {q.data_ptr<float>(), k.data_ptr<float>(), v.data_ptr<float>()};
#pragma omp parallel for collapse(2)
    for (int64_t b = 0; b < B; ++b)
        for (int64_t t = 0; t < T; ++t) {
            const float* row = ps + (b * T + t) * 3 * C;
            for (int p = 0; p < 3; ++p)
                for (int64_t h = 0; h < H; ++h)
                    std::memcpy(dst[p] + ((b * H + h) * T + t) * D, row + p * C + h * D, sizeof(float) * D);
        }
    return {q, k, v};
}

// causal softmax(q k^T * scale) v, written back merged: (B, T, H*D)
torch::Tensor causal_attention(torch::Tensor q, torch::Tensor k, torch::Tensor v, double scale) {
    TORCH_CHECK(q.dim() == 4 && q.sizes() == k.sizes() && q.sizes() == v.sizes(), "attention: shape mismatch");
    q = q.contiguous(); k = k.contiguous(); v = v.contiguous();
    const int64_t B = q.size(0), H = q.size(1), T = q.size(2), D = q.size(3);
    auto y = torch::empty({B, T, H * D}, q.options());
    const float* pq = q.data_ptr<float>();
    const float* pk = k.data_ptr<float>();
    const float* pv = v.data_ptr<float>();
    float* py = y.data_ptr<float>();
    const float sc = (float)scale;
#pragma omp parallel
    {
        std::vector<float> kt(D * T);   // K^T for the current head: (D, T)
        std::vector<float> s(T);
        std::vector<float> acc(D);
#pragma omp for schedule(dynamic, 1)
        for (int64_t bh = 0; bh < B * H; ++bh) {
            const int64_t b = bh / H, h = bh % H;
            const float* Q = pq + bh * T * D;
            const float* Kh = pk + bh * T * D;
            const float* V = pv + bh * T * D;
            for (int64_t t = 0; t < T; ++t)
                for (int64_t d = 0; d < D; ++d) kt[d * T + t] = Kh[t * D + d];
            for (int64_t i = 0; i < T; ++i) {
                const int64_t n = i + 1;          // keys 0..i are visible
                const float* qi = Q + i * D;
                float* sp = s.data();
                for (int64_t j = 0; j < n; ++j) sp[j] = 0.f;
                for (int64_t d = 0; d < D; ++d) {
                    const float qd = qi[d];
                    const float* krow = kt.data() + d * T;
                    for (int64_t j = 0; j < n; ++j) sp[j] += qd * krow[j];
                }
                float mx = -std::numeric_limits<float>::infinity();
                for (int64_t j = 0; j < n; ++j) { sp[j] *= sc; mx = std::max(mx, sp[j]); }
                float sum = 0.f;
                for (int64_t j = 0; j < n; ++j) { sp[j] = std::exp(sp[j] - mx); sum += sp[j]; }
                const float inv = 1.f / sum;
                float* a = acc.data();
                for (int64_t d = 0; d < D; ++d) a[d] = 0.f;
                for (int64_t j = 0; j < n; ++j) {
                    const float p = sp[j];
                    const float* vj = V + j * D;
                    for (int64_t d = 0; d < D; ++d) a[d] += p * vj[d];
                }
                float* out = py + (b * T + i) * H * D + h * D;
                for (int64_t d = 0; d < D; ++d) out[d] = a[d] * inv;
            }
        }
    }
    return y;
}
"""

attn_ext = load_inline(
    name="kb_mingpt_attn_omp",
    cpp_sources=attn_cpp,
    functions=["linear_fwd", "split_heads", "causal_attention"],
    extra_cflags=["-O3", "-march=native", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, n_embd: int, n_head: int, attn_pdrop: float, resid_pdrop: float, max_seqlen: int):
        super().__init__()
        assert n_embd % n_head == 0
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        # dropout probabilities are 0 in this problem: dropout is the identity
        self.attn_dropout = nn.Dropout(attn_pdrop)
        self.resid_dropout = nn.Dropout(resid_pdrop)
        self.register_buffer("bias", torch.tril(torch.ones(max_seqlen, max_seqlen)).view(1, 1, max_seqlen, max_seqlen))
        self.n_head = n_head
        self.n_embd = n_embd

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.size()
        qkv = attn_ext.linear_fwd(x, self.c_attn.weight, self.c_attn.bias)
        q, k, v = attn_ext.split_heads(qkv, self.n_head)
        y = attn_ext.causal_attention(q, k, v, 1.0 / math.sqrt(C // self.n_head))
        return attn_ext.linear_fwd(y, self.c_proj.weight, self.c_proj.bias)


def get_inputs():
    return [torch.randn(batch_size, seq_len, n_embd)]


def get_init_inputs():
    return [n_embd, n_head, attn_pdrop, resid_pdrop, max_seqlen]
