# corpus: problem=kb_l3_039_gru device=cpu expect=accepted policy=both
# style: one kernel per gate in a Python time loop, permute/unbind of projections, chunk of weights, torch.stack of the steps
# class: 2,7
from typing import List, Tuple

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

gru_cpp = r"""
#include <torch/extension.h>
#include <cmath>

namespace {

inline void check2d(const torch::Tensor& t, const char* name) {
    TORCH_CHECK(t.device().is_cpu(), name, ": CPU tensor expected");
    TORCH_CHECK(t.scalar_type() == torch::kFloat32, name, ": float32 expected");
    TORCH_CHECK(t.dim() == 2, name, ": 2-D tensor expected");
}

// acc[m, n] = sum_k a[m, k] * w[n, k] (+ bias[n]) written to out (M, N).
void gemm_nt(const float* a, const float* w, const float* bias, float* out,
             int64_t M, int64_t N, int64_t K) {
    #pragma omp parallel for collapse(2) if (M * N * K > 262144)
    for (int64_t m = 0; m < M; ++m) {
        for (int64_t n = 0; n < N; ++n) {
            const float* ar = a + m * K;
            const float* wr = w + n * K;
            float acc = 0.f;
            #pragma omp simd reduction(+:acc)
            for (int64_t k = 0; k < K; ++k) acc += ar[k] * wr[k];
            out[m * N + n] = acc + (bias ? bias[n] : 0.f);
        }
    }
}

}  // namespace

// Input projection for every time step at once: x (M, K) @ w^T (N, K) + b.
torch::Tensor linear(torch::Tensor x, torch::Tensor w, c10::optional<torch::Tensor> b) {
    check2d(x, "linear x"); check2d(w, "linear w");
    TORCH_CHECK(x.size(1) == w.size(1), "linear: in_features mismatch");
    auto xc = x.contiguous(), wc = w.contiguous();
    torch::Tensor bc;
    const float* bp = nullptr;
    if (b.has_value() && b->defined()) { bc = b->contiguous(); TORCH_CHECK(bc.numel() == wc.size(0)); bp = bc.data_ptr<float>(); }
    auto y = torch::empty({xc.size(0), wc.size(0)}, xc.options());
    gemm_nt(xc.data_ptr<float>(), wc.data_ptr<float>(), bp, y.data_ptr<float>(), xc.size(0), wc.size(0), xc.size(1));
    return y;
}

// Reset / update gate: sigmoid(gi + h @ w_hh_gate^T + b_hh_gate).   gi, result: (B, H)
torch::Tensor gate_sigmoid(torch::Tensor gi, torch::Tensor h, torch::Tensor w, c10::optional<torch::Tensor> b) {
    check2d(gi, "gate gi"); check2d(h, "gate h"); check2d(w, "gate w");
    TORCH_CHECK(h.size(1) == w.size(1) && gi.size(1) == w.size(0) && gi.size(0) == h.size(0), "gate: shape mismatch");
    auto hc = h.contiguous(), wc = w.contiguous(), gic = gi.contiguous();
    torch::Tensor bc;
    const float* bp = nullptr;
    if (b.has_value() && b->defined()) { bc = b->contiguous(); bp = bc.data_ptr<float>(); }
    auto out = torch::empty_like(gic);
    float* o = out.data_ptr<float>();
    gemm_nt(hc.data_ptr<float>(), wc.data_ptr<float>(), bp, o, hc.size(0), wc.size(0), hc.size(1));
    const float* g = gic.data_ptr<float>();
    const int64_t n = out.numel();
    for (int64_t i = 0; i < n; ++i) o[i] = 1.f / (1.f + std::exp(-(g[i] + o[i])));
    return out;
}

// Candidate gate: tanh(gi_n + r * (h @ w_hn^T + b_hn)).
torch::Tensor gate_candidate(torch::Tensor gi, torch::Tensor h, torch::Tensor w, c10::optional<torch::Tensor> b,
                             torch::Tensor r) {
    check2d(gi, "cand gi"); check2d(h, "cand h"); check2d(w, "cand w"); check2d(r, "cand r");
    TORCH_CHECK(r.sizes() == gi.sizes() && h.size(1) == w.size(1) && gi.size(1) == w.size(0), "candidate: shape mismatch");
    auto hc = h.contiguous(), wc = w.contiguous(), gic = gi.contiguous(), rc = r.contiguous();
    torch::Tensor bc;
    const float* bp = nullptr;
    if (b.has_value() && b->defined()) { bc = b->contiguous(); bp = bc.data_ptr<float>(); }
    auto out = torch::empty_like(gic);
    float* o = out.data_ptr<float>();
    gemm_nt(hc.data_ptr<float>(), wc.data_ptr<float>(), bp, o, hc.size(0), wc.size(0), hc.size(1));
    const float* g = gic.data_ptr<float>();
    const float* rp = rc.data_ptr<float>();
    const int64_t n = out.numel();
    for (int64_t i = 0; i < n; ++i) o[i] = std::tanh(g[i] + rp[i] * o[i]);
    return out;
}

// h' = (1 - z) * n + z * h
torch::Tensor hidden_update(torch::Tensor z, torch::Tensor n, torch::Tensor h) {
    TORCH_CHECK(z.sizes() == n.sizes() && n.sizes() == h.sizes(), "hidden_update: shape mismatch");
    auto zc = z.contiguous(), nc = n.contiguous(), hc = h.contiguous();
    auto out = torch::empty_like(hc);
    const float *zp = zc.data_ptr<float>(), *np = nc.data_ptr<float>(), *hp = hc.data_ptr<float>();
    float* o = out.data_ptr<float>();
    const int64_t cnt = out.numel();
    for (int64_t i = 0; i < cnt; ++i) o[i] = (1.f - zp[i]) * np[i] + zp[i] * hp[i];
    return out;
}
"""

gru_ext = load_inline(
    name="kb_l3_039_gru__gate_kernels_timeloop",
    cpp_sources=gru_cpp,
    functions=["linear", "gate_sigmoid", "gate_candidate", "hidden_update"],
    extra_cflags=["-O3", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    verbose=False,
)


class ModelNew(nn.Module):
    """Multi-layer GRU: one C++ kernel per gate, stepped through time in Python."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 3, bias: bool = True,
                 batch_first: bool = False) -> None:
        super().__init__()
        # nn.GRU only as the parameter container (same layout and init as the reference).
        self.gru = nn.GRU(input_size, hidden_size, num_layers, bias, batch_first, dropout=0, bidirectional=False)
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.use_bias = bias
        self.batch_first = batch_first

    def _params(self, layer: int):
        w_ih = getattr(self.gru, f"weight_ih_l{layer}")
        w_hh = getattr(self.gru, f"weight_hh_l{layer}")
        b_ih = getattr(self.gru, f"bias_ih_l{layer}") if self.use_bias else None
        b_hh = getattr(self.gru, f"bias_hh_l{layer}") if self.use_bias else None
        return w_ih, w_hh, b_ih, b_hh

    def _run_layer(self, x: torch.Tensor, h: torch.Tensor, layer: int) -> Tuple[torch.Tensor, torch.Tensor]:
        T, B, _ = x.shape
        H = self.hidden_size
        w_ih, w_hh, b_ih, b_hh = self._params(layer)

        # All input projections at once, then (T*B, 3H) -> (3, T, B, H) so each gate's slice is contiguous.
        gi = gru_ext.linear(x.reshape(T * B, -1), w_ih, b_ih)
        gi_r, gi_z, gi_n = gi.view(T, B, 3, H).permute(2, 0, 1, 3).contiguous().unbind(0)

        w_hr, w_hz, w_hn = w_hh.chunk(3, dim=0)
        b_hr, b_hz, b_hn = b_hh.chunk(3, dim=0) if b_hh is not None else (None, None, None)

        outputs: List[torch.Tensor] = []
        for t in range(T):
            r = gru_ext.gate_sigmoid(gi_r[t], h, w_hr, b_hr)
            z = gru_ext.gate_sigmoid(gi_z[t], h, w_hz, b_hz)
            n = gru_ext.gate_candidate(gi_n[t], h, w_hn, b_hn, r)
            h = gru_ext.hidden_update(z, n, h)
            outputs.append(h)
        return torch.stack(outputs, dim=0), h

    def forward(self, x: torch.Tensor, h0: torch.Tensor) -> torch.Tensor:
        if self.batch_first:
            x = x.transpose(0, 1)
        layer_in = x.contiguous()
        for layer in range(self.num_layers):
            layer_in, _h_last = self._run_layer(layer_in, h0[layer].contiguous(), layer)
        out = layer_in
        if self.batch_first:
            out = out.transpose(0, 1)
        return out
