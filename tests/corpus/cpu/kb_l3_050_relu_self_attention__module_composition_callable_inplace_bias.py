# corpus: problem=kb_l3_050_relu_self_attention device=cpu expect=accepted policy=kernelbench
# style: module composition, an nn.Linear subclass, a KernelCall class (__call__ forwarding *args to getattr(ext, name)) held as a class attribute and as a submodule attribute, out-parameter kernel then out.add_(bias) in PyTorch, mask buffer handed to the kernel (blind round 11; kernel-output-unused static_reject before)
# class: 2
import math

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

attn_source = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <algorithm>

// out[M, N] = a[M, K] @ w[N, K]^T   (bias is added by the caller)
void matmul_nt_out(const torch::Tensor& a, const torch::Tensor& w, torch::Tensor& out) {
    TORCH_CHECK(a.dim() == 2 && w.dim() == 2 && out.dim() == 2, "matmul_nt_out: 2D tensors");
    TORCH_CHECK(a.size(1) == w.size(1), "matmul_nt_out: K mismatch");
    TORCH_CHECK(out.size(0) == a.size(0) && out.size(1) == w.size(0), "matmul_nt_out: out shape");
    TORCH_CHECK(a.is_contiguous() && w.is_contiguous() && out.is_contiguous(), "matmul_nt_out: contiguous");
    const int64_t M = a.size(0), K = a.size(1), N = w.size(0);
    const float* ap = a.data_ptr<float>();
    const float* wp = w.data_ptr<float>();
    float* op = out.data_ptr<float>();
    at::parallel_for(0, M, 4, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) {
            const float* ar = ap + i * K;
            for (int64_t j = 0; j < N; ++j) {
                const float* wr = wp + j * K;
                float s0 = 0.f, s1 = 0.f, s2 = 0.f, s3 = 0.f;
                int64_t k = 0;
                for (; k + 4 <= K; k += 4) {
                    s0 += ar[k] * wr[k];
                    s1 += ar[k + 1] * wr[k + 1];
                    s2 += ar[k + 2] * wr[k + 2];
                    s3 += ar[k + 3] * wr[k + 3];
                }
                float s = (s0 + s1) + (s2 + s3);
                for (; k < K; ++k) s += ar[k] * wr[k];
                op[i * N + j] = s;
            }
        }
    });
}

// qkv: (B, T, 3C) laid out as [q | k | v]; mask: (T, T), zero = masked.
// y[b, i, h*hs + d] = sum_j relu(scale * <q_i, k_j>) * v_j[d] over unmasked j.
torch::Tensor relu_attention(const torch::Tensor& qkv, const torch::Tensor& mask,
                             int64_t n_head, double scale) {
    TORCH_CHECK(qkv.dim() == 3 && qkv.is_contiguous(), "relu_attention: contiguous (B, T, 3C)");
    const int64_t B = qkv.size(0), T = qkv.size(1), C3 = qkv.size(2);
    TORCH_CHECK(C3 % 3 == 0, "relu_attention: last dim must be 3*C");
    const int64_t C = C3 / 3;
    TORCH_CHECK(C % n_head == 0, "relu_attention: C % n_head != 0");
    TORCH_CHECK(mask.dim() == 2 && mask.size(0) >= T && mask.size(1) >= T, "relu_attention: mask");
    auto mask_c = mask.contiguous().to(torch::kFloat32);
    const int64_t hs = C / n_head;
    const int64_t mstride = mask_c.size(1);
    auto y = torch::empty({B, T, C}, qkv.options());
    const float* base = qkv.data_ptr<float>();
    const float* mp = mask_c.data_ptr<float>();
    float* yp = y.data_ptr<float>();
    const float sc = static_cast<float>(scale);

    at::parallel_for(0, B * n_head * T, 8, [&](int64_t r0, int64_t r1) {
        std::vector<float> acc(hs);
        for (int64_t r = r0; r < r1; ++r) {
            const int64_t i = r % T;
            const int64_t h = (r / T) % n_head;
            const int64_t b = r / (T * n_head);
            const float* q = base + (b * T + i) * C3 + h * hs;
            std::fill(acc.begin(), acc.end(), 0.f);
            for (int64_t j = 0; j < T; ++j) {
                if (mp[i * mstride + j] == 0.f) continue;
                const float* kj = base + (b * T + j) * C3 + C + h * hs;
                float dot = 0.f;
                for (int64_t d = 0; d < hs; ++d) dot += q[d] * kj[d];
                const float a = dot * sc;
                if (!(a > 0.f)) continue;   // relu
                const float* vj = base + (b * T + j) * C3 + 2 * C + h * hs;
                for (int64_t d = 0; d < hs; ++d) acc[d] += a * vj[d];
            }
            float* out = yp + (b * T + i) * C + h * hs;
            for (int64_t d = 0; d < hs; ++d) out[d] = acc[d];
        }
    });
    return y;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("matmul_nt_out", &matmul_nt_out, "a @ w^T into out");
    m.def("relu_attention", &relu_attention, "causal ReLU attention on packed qkv");
}
"""

attn_ext = load_inline(
    name="kb_relu_self_attention_ext",
    cpp_sources=attn_source,
    extra_cflags=["-O3", "-march=native"],
    verbose=False,
)


class KernelCall:
    """Looks a kernel up by name once and calls it."""

    def __init__(self, name):
        self.name = name
        self.fn = getattr(attn_ext, name)

    def __call__(self, *args):
        return self.fn(*args)


class KernelLinear(nn.Linear):
    """nn.Linear (same init / parameter names) whose forward runs the C++ matmul."""

    _matmul = KernelCall("matmul_nt_out")

    def forward(self, x):
        *lead, K = x.shape
        x = x.reshape(-1, K).contiguous()
        out = torch.empty(x.shape[0], self.out_features, dtype=x.dtype, device=x.device)
        self._matmul(x, self.weight.contiguous(), out)
        if self.bias is not None:
            out.add_(self.bias)
        return out.view(*lead, self.out_features)


class CausalReLUAttention(nn.Module):
    def __init__(self, n_head):
        super().__init__()
        self.n_head = n_head
        self.kernel = KernelCall("relu_attention")

    def forward(self, qkv, mask):
        B, T, C3 = qkv.shape
        hs = C3 // 3 // self.n_head
        return self.kernel(qkv.contiguous(), mask, self.n_head, 1.0 / math.sqrt(hs))


class ModelNew(nn.Module):
    def __init__(self, n_embd, n_head, max_seqlen):
        super().__init__()
        assert n_embd % n_head == 0
        self.c_attn = KernelLinear(n_embd, 3 * n_embd)
        self.c_proj = KernelLinear(n_embd, n_embd)   # present in the reference (unused in forward)
        self.register_buffer("bias", torch.tril(torch.ones(max_seqlen, max_seqlen))
                                     .view(1, 1, max_seqlen, max_seqlen))
        self.n_head = n_head
        self.n_embd = n_embd
        self.attn = CausalReLUAttention(n_head)

    def forward(self, x):
        B, T, C = x.size()
        qkv = self.c_attn(x)                       # (B, T, 3C)
        y = self.attn(qkv, self.bias[0, 0, :T, :T])  # (B, T, C), heads side by side
        return y


if __name__ == "__main__":
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "prob", "/work/fresh/t_chk/problems_small/kb_l3_050_relu_self_attention.py")
    prob = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(prob)
    torch.manual_seed(0)
    ref = prob.Model(*prob.get_init_inputs())
    torch.manual_seed(0)
    new = ModelNew(*prob.get_init_inputs())
    x = prob.get_inputs()[0]
    with torch.no_grad():
        r = ref(x)
        g = new(x)
        r2 = ref(x[:, :37])
        g2 = new(x[:, :37])
    print((r - g).abs().max().item(), r.abs().max().item(), (r2 - g2).abs().max().item())
