# corpus: problem=kb_l3_043_mingpt_causal_attention device=cpu expect=accepted policy=kernelbench
# style: TORCH_LIBRARY op registered with m.def/m.impl and called via torch.ops; PyTorch's Linear projections kept; fused causal softmax attention in OpenMP
# class: 7
import math
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

attn_source = r"""
#include <torch/extension.h>
#include <torch/library.h>
#include <omp.h>
#include <cmath>
#include <limits>
#include <vector>
#include <algorithm>

// Fused causal multi-head attention on the packed output of c_attn.
// qkv: (B, T, 3*C) laid out as [q | k | v], heads of size C/n_head inside each.
// returns y: (B, T, C) with heads already merged back.
at::Tensor causal_attention(const at::Tensor& qkv_in, int64_t n_head) {
    TORCH_CHECK(qkv_in.dim() == 3, "qkv must be (B, T, 3C)");
    TORCH_CHECK(qkv_in.scalar_type() == at::kFloat, "float32 only");
    TORCH_CHECK(qkv_in.size(2) % (3 * n_head) == 0, "3C must be divisible by 3*n_head");
    at::Tensor qkv = qkv_in.contiguous();
    const int64_t B = qkv.size(0), T = qkv.size(1), C3 = qkv.size(2);
    const int64_t C = C3 / 3, D = C / n_head;
    const float scale = 1.0f / std::sqrt(static_cast<float>(D));

    at::Tensor y = at::empty({B, T, C}, qkv.options());
    const float* base = qkv.data_ptr<float>();
    float* yp = y.data_ptr<float>();

    #pragma omp parallel
    {
        std::vector<float> scores(T);
        #pragma omp for collapse(2) schedule(static)
        for (int64_t b = 0; b < B; ++b) {
            for (int64_t h = 0; h < n_head; ++h) {
                const float* qb = base + b * T * C3 + h * D;          // q[b, :, h, :]
                const float* kb = qb + C;                              // k[b, :, h, :]
                const float* vb = qb + 2 * C;                          // v[b, :, h, :]
                for (int64_t i = 0; i < T; ++i) {
                    const float* qi = qb + i * C3;
                    float mx = -std::numeric_limits<float>::infinity();
                    // causal: only keys j <= i
                    for (int64_t j = 0; j <= i; ++j) {
                        const float* kj = kb + j * C3;
                        float s = 0.f;
                        for (int64_t d = 0; d < D; ++d) s += qi[d] * kj[d];
                        s *= scale;
                        scores[j] = s;
                        mx = std::max(mx, s);
                    }
                    float sum = 0.f;
                    for (int64_t j = 0; j <= i; ++j) {
                        scores[j] = std::exp(scores[j] - mx);
                        sum += scores[j];
                    }
                    const float inv = 1.f / sum;
                    float* out = yp + (b * T + i) * C + h * D;
                    for (int64_t d = 0; d < D; ++d) out[d] = 0.f;
                    for (int64_t j = 0; j <= i; ++j) {
                        const float p = scores[j] * inv;
                        const float* vj = vb + j * C3;
                        for (int64_t d = 0; d < D; ++d) out[d] += p * vj[d];
                    }
                }
            }
        }
    }
    return y;
}

TORCH_LIBRARY(kb_fresh_b_mingpt, m) {
    m.def("causal_attention(Tensor qkv, int n_head) -> Tensor");
    m.impl("causal_attention", c10::DispatchKey::CPU, TORCH_FN(causal_attention));
}
"""

load_inline(
    name="kb_l3_043_mingpt_causal_attention__torch_library_op",
    cpp_sources=attn_source,
    extra_cflags=["-O3", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    is_python_module=False,
    verbose=False,
)


class ModelNew(nn.Module):
    """minGPT causal self-attention: nn.Linear projections, fused custom C++ attention core."""

    def __init__(self, n_embd: int, n_head: int, attn_pdrop: float, resid_pdrop: float, max_seqlen: int):
        super().__init__()
        assert n_embd % n_head == 0
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.attn_dropout = nn.Dropout(attn_pdrop)  # p = 0 here; the fused kernel has no attention dropout
        self.resid_dropout = nn.Dropout(resid_pdrop)
        self.register_buffer("bias", torch.tril(torch.ones(max_seqlen, max_seqlen)).view(1, 1, max_seqlen, max_seqlen))
        self.n_head = n_head
        self.n_embd = n_embd
        self.max_seqlen = max_seqlen

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.size()
        assert T <= self.max_seqlen
        qkv = self.c_attn(x)
        y = torch.ops.kb_fresh_b_mingpt.causal_attention(qkv, self.n_head)
        return self.resid_dropout(self.c_proj(y))
