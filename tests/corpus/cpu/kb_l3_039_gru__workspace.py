# corpus: problem=kb_l3_039_gru device=cpu expect=accepted policy=both
# style: GRU cell kernels over time with scratch buffers kept on the module
# class: 8
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_cpp_src = r"""
#include <torch/extension.h>
#include <vector>
#include <cmath>
#include <cstring>

static inline float sigm(float v) { return 1.0f / (1.0f + std::exp(-v)); }

// y[r, o] = sum_i x[r, i] * W[o, i] (+ b[o])
static void linear_rows(const float* x, int64_t R, int64_t I, const float* W, const float* b,
                        int64_t O, float* y) {
    #pragma omp parallel for collapse(2) schedule(static)
    for (int64_t r = 0; r < R; ++r)
        for (int64_t o = 0; o < O; ++o) {
            const float* xr = x + r * I;
            const float* wr = W + o * I;
            float acc = b ? b[o] : 0.0f;
            for (int64_t i = 0; i < I; ++i) acc += xr[i] * wr[i];
            y[r * O + o] = acc;
        }
}

// Multi-layer unidirectional GRU, sequence-first.
// x: [T, B, I], h0: [L, B, H], params: per layer {w_ih, w_hh, (b_ih, b_hh)}.
// ws_gi: workspace of >= T*B*3H floats, ws_gh: >= B*3H, ws_seq: >= T*B*H (caller-owned, reused).
// Returns {output [T, B, H], h_n [L, B, H]}.
std::vector<torch::Tensor> gru_forward(torch::Tensor x, torch::Tensor h0, std::vector<torch::Tensor> params,
                                       bool has_bias, int64_t num_layers,
                                       torch::Tensor ws_gi, torch::Tensor ws_gh, torch::Tensor ws_seq) {
    TORCH_CHECK(x.dim() == 3 && h0.dim() == 3, "x must be [T,B,I], h0 [L,B,H]");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "float32 only");
    const int64_t per = has_bias ? 4 : 2;
    TORCH_CHECK((int64_t)params.size() == per * num_layers, "wrong number of parameter tensors");
    x = x.contiguous(); h0 = h0.contiguous();
    const int64_t T = x.size(0), B = x.size(1), H = h0.size(2);
    TORCH_CHECK(ws_gi.numel() >= T * B * 3 * H && ws_gh.numel() >= B * 3 * H && ws_seq.numel() >= T * B * H,
                "workspace too small");

    auto out = torch::empty({T, B, H}, x.options());
    auto hn = torch::empty({num_layers, B, H}, x.options());
    float* gi = ws_gi.data_ptr<float>();
    float* gh = ws_gh.data_ptr<float>();
    float* seq = ws_seq.data_ptr<float>();

    const float* layer_in = x.data_ptr<float>();
    int64_t in_dim = x.size(2);
    for (int64_t l = 0; l < num_layers; ++l) {
        auto w_ih = params[l * per + 0].contiguous();
        auto w_hh = params[l * per + 1].contiguous();
        torch::Tensor b_ih, b_hh;
        if (has_bias) { b_ih = params[l * per + 2].contiguous(); b_hh = params[l * per + 3].contiguous(); }
        TORCH_CHECK(w_ih.size(1) == in_dim && w_ih.size(0) == 3 * H, "w_ih shape");
        const float* pbi = has_bias ? b_ih.data_ptr<float>() : nullptr;
        const float* pbh = has_bias ? b_hh.data_ptr<float>() : nullptr;

        // input projections for all steps at once
        linear_rows(layer_in, T * B, in_dim, w_ih.data_ptr<float>(), pbi, 3 * H, gi);

        // this layer writes its sequence into `out` on the last layer, else into the workspace
        float* layer_out = (l == num_layers - 1) ? out.data_ptr<float>() : seq;
        float* h = hn.data_ptr<float>() + l * B * H;
        std::memcpy(h, h0.data_ptr<float>() + l * B * H, sizeof(float) * B * H);
        for (int64_t t = 0; t < T; ++t) {
            linear_rows(h, B, H, w_hh.data_ptr<float>(), pbh, 3 * H, gh);
            const float* git = gi + t * B * 3 * H;
            float* ot = layer_out + t * B * H;
            #pragma omp parallel for collapse(2) schedule(static)
            for (int64_t bb = 0; bb < B; ++bb)
                for (int64_t j = 0; j < H; ++j) {
                    const float* a = git + bb * 3 * H;
                    const float* c = gh + bb * 3 * H;
                    const float r = sigm(a[j] + c[j]);
                    const float z = sigm(a[H + j] + c[H + j]);
                    const float n = std::tanh(a[2 * H + j] + r * c[2 * H + j]);
                    const float hv = (1.0f - z) * n + z * h[bb * H + j];
                    ot[bb * H + j] = hv;
                }
            std::memcpy(h, ot, sizeof(float) * B * H);
        }
        // the next layer projects all of `seq` into gi before its recurrence overwrites `seq`
        layer_in = layer_out;
        in_dim = H;
    }
    return {out, hn};
}
"""

_ext = load_inline(
    name="kb_l3_039_gru__workspace",
    cpp_sources=_cpp_src,
    functions=["gru_forward"],
    extra_cflags=["-O3", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 3, bias: bool = True,
                 batch_first: bool = False):
        super().__init__()
        # keep nn.GRU only as the owner of the weights (same init as the reference)
        self.gru = nn.GRU(input_size, hidden_size, num_layers, bias, batch_first, dropout=0, bidirectional=False)
        self._ws = {}

    def _workspace(self, T, B, H):
        key = (T, B, H)
        if self._ws.get("key") != key:
            self._ws = {
                "key": key,
                "gi": torch.empty(T * B * 3 * H),
                "gh": torch.empty(B * 3 * H),
                "seq": torch.empty(T * B * H),
            }
        return self._ws["gi"], self._ws["gh"], self._ws["seq"]

    def forward(self, x: torch.Tensor, h0: torch.Tensor) -> torch.Tensor:
        g = self.gru
        if g.batch_first:
            x = x.transpose(0, 1)
        T, B = x.shape[0], x.shape[1]
        H = g.hidden_size
        params = []
        for l in range(g.num_layers):
            params += [getattr(g, f"weight_ih_l{l}"), getattr(g, f"weight_hh_l{l}")]
            if g.bias:
                params += [getattr(g, f"bias_ih_l{l}"), getattr(g, f"bias_hh_l{l}")]
        gi, gh, seq = self._workspace(T, B, H)
        out, _h_n = _ext.gru_forward(x, h0, [p.detach() for p in params], g.bias, g.num_layers, gi, gh, seq)
        if g.batch_first:
            out = out.transpose(0, 1)
        return out

