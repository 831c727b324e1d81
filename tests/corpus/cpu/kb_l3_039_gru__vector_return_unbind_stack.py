# corpus: problem=kb_l3_039_gru device=cpu expect=accepted policy=both
# style: std::vector<Tensor> return; h0.unbind(0) layer loop; w.t().contiguous(); reshape/view of the input projection; torch.stack(h_n); method aliases; -ffast-math
# class: 1
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

batch_size = 3
seq_len = 512
input_size = 64
hidden_size = 128
num_layers = 6

gru_cpp = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <cmath>
#include <vector>

// y = x @ w_t + b ; x (M, K), w_t (K, N), b (N)
torch::Tensor linear_bias(torch::Tensor x, torch::Tensor w_t, torch::Tensor b) {
    TORCH_CHECK(x.dim() == 2 && w_t.dim() == 2 && x.size(1) == w_t.size(0), "linear_bias: shapes");
    x = x.contiguous(); w_t = w_t.contiguous(); b = b.contiguous();
    const int64_t M = x.size(0), K = x.size(1), N = w_t.size(1);
    auto y = torch::empty({M, N}, x.options());
    const float* px = x.data_ptr<float>();
    const float* pw = w_t.data_ptr<float>();
    const float* pb = b.data_ptr<float>();
    float* py = y.data_ptr<float>();
    at::parallel_for(0, M, 16, [&](int64_t m0, int64_t m1) {
        for (int64_t m = m0; m < m1; ++m) {
            float* yr = py + m * N;
            for (int64_t n = 0; n < N; ++n) yr[n] = pb[n];
            for (int64_t k = 0; k < K; ++k) {
                const float a = px[m * K + k];
                const float* wr = pw + k * N;
                for (int64_t n = 0; n < N; ++n) yr[n] += a * wr[n];
            }
        }
    });
    return y;
}

static inline float sigmoidf_(float v) { return 1.f / (1.f + std::exp(-v)); }

// gx: (T, B, 3H) precomputed input projections (bias included), h0: (B, H),
// w_hh_t: (H, 3H), b_hh: (3H). Gate order r, z, n (as torch.nn.GRU).
// Returns {output (T, B, H), h_last (B, H)}.
std::vector<torch::Tensor> gru_recurrence(torch::Tensor gx, torch::Tensor h0,
                                          torch::Tensor w_hh_t, torch::Tensor b_hh) {
    gx = gx.contiguous(); h0 = h0.contiguous(); w_hh_t = w_hh_t.contiguous(); b_hh = b_hh.contiguous();
    TORCH_CHECK(gx.dim() == 3, "gx must be (T, B, 3H)");
    const int64_t T = gx.size(0), B = gx.size(1), H3 = gx.size(2), H = H3 / 3;
    TORCH_CHECK(h0.size(0) == B && h0.size(1) == H, "h0 shape");
    TORCH_CHECK(w_hh_t.size(0) == H && w_hh_t.size(1) == H3, "w_hh_t shape");
    auto out = torch::empty({T, B, H}, gx.options());
    auto h = h0.clone();
    std::vector<float> gh((size_t)(B * H3));
    const float* pgx = gx.data_ptr<float>();
    const float* pw = w_hh_t.data_ptr<float>();
    const float* pb = b_hh.data_ptr<float>();
    float* ph = h.data_ptr<float>();
    float* po = out.data_ptr<float>();
    for (int64_t t = 0; t < T; ++t) {
        // gh = h @ w_hh_t + b_hh
        for (int64_t bi = 0; bi < B; ++bi) {
            float* g = gh.data() + bi * H3;
            for (int64_t j = 0; j < H3; ++j) g[j] = pb[j];
            const float* hb = ph + bi * H;
            for (int64_t k = 0; k < H; ++k) {
                const float a = hb[k];
                const float* wr = pw + k * H3;
                for (int64_t j = 0; j < H3; ++j) g[j] += a * wr[j];
            }
        }
        const float* gxt = pgx + t * B * H3;
        float* ot = po + t * B * H;
        for (int64_t bi = 0; bi < B; ++bi) {
            const float* xg = gxt + bi * H3;
            const float* hg = gh.data() + bi * H3;
            float* hb = ph + bi * H;
            for (int64_t j = 0; j < H; ++j) {
                const float r = sigmoidf_(xg[j] + hg[j]);
                const float z = sigmoidf_(xg[H + j] + hg[H + j]);
                const float n = std::tanh(xg[2 * H + j] + r * hg[2 * H + j]);
                const float hn = (1.f - z) * n + z * hb[j];
                hb[j] = hn;
                ot[bi * H + j] = hn;
            }
        }
    }
    return {out, h};
}
"""

gru_ext = load_inline(
    name="kb_gru_layers_cpu",
    cpp_sources=gru_cpp,
    functions=["linear_bias", "gru_recurrence"],
    extra_cflags=["-O3", "-march=native", "-ffast-math"],
    with_cuda=False,
)


class ModelNew(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 3, bias: bool = True,
                 batch_first: bool = False):
        super().__init__()
        # keep nn.GRU so the seeded parameters match the reference exactly
        self.gru = nn.GRU(input_size, hidden_size, num_layers, bias, batch_first, dropout=0, bidirectional=False)
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.batch_first = batch_first
        self.proj = gru_ext.linear_bias
        self.recur = gru_ext.gru_recurrence

    def _layer_params(self, layer):
        w_ih = getattr(self.gru, f"weight_ih_l{layer}")
        w_hh = getattr(self.gru, f"weight_hh_l{layer}")
        if self.gru.bias:
            b_ih = getattr(self.gru, f"bias_ih_l{layer}")
            b_hh = getattr(self.gru, f"bias_hh_l{layer}")
        else:
            b_ih = w_ih.new_zeros(w_ih.shape[0])
            b_hh = w_hh.new_zeros(w_hh.shape[0])
        return w_ih.t().contiguous(), w_hh.t().contiguous(), b_ih, b_hh

    @torch.no_grad()
    def forward(self, x: torch.Tensor, h0: torch.Tensor) -> torch.Tensor:
        if self.batch_first:
            x = x.transpose(0, 1).contiguous()
        T, B = x.shape[0], x.shape[1]
        layer_in = x.float()
        h_n = []
        for layer, h_init in enumerate(h0.unbind(0)):
            w_ih_t, w_hh_t, b_ih, b_hh = self._layer_params(layer)
            gx = self.proj(layer_in.reshape(T * B, -1), w_ih_t, b_ih).view(T, B, -1)
            layer_in, h_last = self.recur(gx, h_init, w_hh_t, b_hh)
            h_n.append(h_last)
        _ = torch.stack(h_n, 0)  # final hidden state (unused by the reference's return)
        out = layer_in
        if self.batch_first:
            out = out.transpose(0, 1).contiguous()
        return out


def get_inputs():
    return [torch.rand(seq_len, batch_size, input_size), torch.rand(num_layers, batch_size, hidden_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_layers]
