# corpus: problem=kb_l3_039_gru device=cpu expect=accepted policy=both
# style: keeps self.gru; per-layer weights passed as std::vector<torch::Tensor>; accessors; plain loops; returns {output, h_n}; @torch.no_grad(); __main__ self-test
# class: 2
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

batch_size = 3
seq_len = 512
input_size = 64
hidden_size = 128
num_layers = 6

gru_cpp_source = r"""
#include <torch/extension.h>
#include <vector>
#include <cmath>

static inline float sigmoidf_(float v) { return 1.f / (1.f + std::exp(-v)); }

// Multi-layer unidirectional GRU, sequence-first.
//   x:  (T, B, I)     h0: (L, B, H)
//   weights: for every layer [w_ih (3H, in), w_hh (3H, H), b_ih (3H), b_hh (3H)]  (gate order r, z, n)
// Returns {output (T, B, H) of the last layer, h_n (L, B, H)}.
std::vector<torch::Tensor> gru_forward(torch::Tensor x, torch::Tensor h0,
                                       std::vector<torch::Tensor> weights, bool has_bias) {
    TORCH_CHECK(x.dim() == 3 && h0.dim() == 3, "x must be (T,B,I) and h0 (L,B,H)");
    TORCH_CHECK(x.scalar_type() == torch::kFloat && h0.scalar_type() == torch::kFloat, "float32 only");
    const int64_t T = x.size(0), B = x.size(1);
    const int64_t L = h0.size(0), H = h0.size(2);
    const int64_t per_layer = has_bias ? 4 : 2;
    TORCH_CHECK((int64_t)weights.size() == L * per_layer, "unexpected number of weight tensors");

    torch::Tensor layer_in = x.contiguous();
    auto h_n = torch::empty({L, B, H}, x.options());
    auto h0c = h0.contiguous();
    auto h0a = h0c.accessor<float, 3>();
    auto hna = h_n.accessor<float, 3>();

    std::vector<float> gi(3 * H), gh(3 * H), h(B * H), hnew(B * H);

    for (int64_t l = 0; l < L; ++l) {
        auto w_ih = weights[l * per_layer + 0].contiguous();
        auto w_hh = weights[l * per_layer + 1].contiguous();
        const int64_t I = layer_in.size(2);
        TORCH_CHECK(w_ih.size(0) == 3 * H && w_ih.size(1) == I, "w_ih shape mismatch in layer ", l);
        auto wi = w_ih.accessor<float, 2>();
        auto wh = w_hh.accessor<float, 2>();
        torch::Tensor b_ih, b_hh;
        if (has_bias) {
            b_ih = weights[l * per_layer + 2].contiguous();
            b_hh = weights[l * per_layer + 3].contiguous();
        }
        const float* bi = has_bias ? b_ih.data_ptr<float>() : nullptr;
        const float* bh = has_bias ? b_hh.data_ptr<float>() : nullptr;

        auto out = torch::empty({T, B, H}, x.options());
        auto xa = layer_in.accessor<float, 3>();
        auto oa = out.accessor<float, 3>();

        for (int64_t b = 0; b < B; ++b)
            for (int64_t j = 0; j < H; ++j) h[b * H + j] = h0a[l][b][j];

        for (int64_t t = 0; t < T; ++t) {
            for (int64_t b = 0; b < B; ++b) {
                const float* hb = &h[b * H];
                auto xt = xa[t][b];
                for (int64_t g = 0; g < 3 * H; ++g) {
                    float si = bi ? bi[g] : 0.f;
                    auto wrow = wi[g];
                    for (int64_t k = 0; k < I; ++k) si += wrow[k] * xt[k];
                    float sh = bh ? bh[g] : 0.f;
                    auto hrow = wh[g];
                    for (int64_t k = 0; k < H; ++k) sh += hrow[k] * hb[k];
                    gi[g] = si;
                    gh[g] = sh;
                }
                for (int64_t j = 0; j < H; ++j) {
                    const float r = sigmoidf_(gi[j] + gh[j]);
                    const float z = sigmoidf_(gi[H + j] + gh[H + j]);
                    const float n = std::tanh(gi[2 * H + j] + r * gh[2 * H + j]);
                    const float hv = (1.f - z) * n + z * hb[j];
                    hnew[b * H + j] = hv;
                    oa[t][b][j] = hv;
                }
            }
            h.swap(hnew);
        }
        for (int64_t b = 0; b < B; ++b)
            for (int64_t j = 0; j < H; ++j) hna[l][b][j] = h[b * H + j];
        layer_in = out;
    }
    return {layer_in, h_n};
}
"""

gru_ext = load_inline(
    name="kb_l3_039_gru_cpu",
    cpp_sources=gru_cpp_source,
    functions=["gru_forward"],
    extra_cflags=["-O3", "-march=native"],
    with_cuda=False,
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 3, bias: bool = True,
                 batch_first: bool = False):
        super().__init__()
        # the reference's GRU, kept only as the owner of the parameters (same names, same init)
        self.gru = nn.GRU(input_size, hidden_size, num_layers, bias, batch_first, dropout=0, bidirectional=False)

    @torch.no_grad()
    def forward(self, x: torch.Tensor, h0: torch.Tensor) -> torch.Tensor:
        g = self.gru
        if g.batch_first:
            x = x.transpose(0, 1)
        weights = []
        for l in range(g.num_layers):
            weights.append(getattr(g, f"weight_ih_l{l}"))
            weights.append(getattr(g, f"weight_hh_l{l}"))
            if g.bias:
                weights.append(getattr(g, f"bias_ih_l{l}"))
                weights.append(getattr(g, f"bias_hh_l{l}"))
        output, _h_n = gru_ext.gru_forward(x, h0, weights, g.bias)
        if g.batch_first:
            output = output.transpose(0, 1)
        return output


def get_inputs():
    return [torch.rand(seq_len, batch_size, input_size), torch.rand(num_layers, batch_size, hidden_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_layers]


if __name__ == "__main__":
    import time
    torch.manual_seed(0)
    model = ModelNew(input_size, hidden_size, num_layers)
    x, h0 = get_inputs()
    t0 = time.time()
    out = model(x, h0)
    t1 = time.time()
    with torch.no_grad():
        ref, ref_h = model.gru(x, h0)
    print("output", tuple(out.shape), "max abs err:", (out - ref).abs().max().item(), "(%.3fs)" % (t1 - t0))
    _, hn = gru_ext.gru_forward(x, h0, [p for p in model.gru._flat_weights], True)
    print("h_n max abs err:", (hn - ref_h).abs().max().item())
    m2 = ModelNew(8, 16, 2, bias=False)
    x2, h2 = torch.randn(11, 4, 8), torch.randn(2, 4, 16)
    with torch.no_grad():
        print("no-bias max abs err:", (m2(x2, h2) - m2.gru(x2, h2)[0]).abs().max().item())
