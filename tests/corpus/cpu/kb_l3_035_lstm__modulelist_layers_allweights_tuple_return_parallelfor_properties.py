# corpus: problem=kb_l3_035_lstm device=cpu expect=accepted policy=both
# style: nn.LSTM and nn.Linear kept for their parameters, an nn.ModuleList of per-layer kernel modules zipped with lstm.all_weights through a @property, std::tuple return unpacked, h0/c0 drawn with torch.randn as the reference draws them and cloned in C++, at::parallel_for gate GEMMs, the head as a second extension function (blind round 13)
# class: 2, 7
import warnings
from typing import List, Optional, Tuple

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

lstm_cpp = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <cmath>
#include <tuple>

namespace py = pybind11;

static inline float sigmoidf(float v) { return 1.0f / (1.0f + std::exp(-v)); }

// y[r, n] = sum_k a[r, k] * w[n, k] + b1[n] (+ b2[n])
static void rows_times_wt(const float* a, const float* w, const float* b1, const float* b2,
                          float* y, int64_t R, int64_t K, int64_t N) {
    at::parallel_for(0, R * N, 256, [&](int64_t begin, int64_t end) {
        for (int64_t idx = begin; idx < end; ++idx) {
            const int64_t r = idx / N, n = idx % N;
            const float* ar = a + r * K;
            const float* wr = w + n * K;
            float acc = 0.f;
            for (int64_t k = 0; k < K; ++k) acc += ar[k] * wr[k];
            if (b1) acc += b1[n];
            if (b2) acc += b2[n];
            y[idx] = acc;
        }
    });
}

// One unidirectional LSTM layer, batch_first. Gate order (i, f, g, o) as in torch.nn.LSTM.
std::tuple<at::Tensor, at::Tensor, at::Tensor> lstm_layer_forward(
        const at::Tensor& x, const at::Tensor& h0, const at::Tensor& c0,
        const at::Tensor& w_ih, const at::Tensor& w_hh,
        const at::Tensor& b_ih, const at::Tensor& b_hh) {
    TORCH_CHECK(x.dim() == 3, "x must be (B, T, I)");
    TORCH_CHECK(x.scalar_type() == at::kFloat, "float32 only");
    auto xc = x.contiguous();
    auto wih = w_ih.contiguous();
    auto whh = w_hh.contiguous();
    auto bih = b_ih.contiguous();
    auto bhh = b_hh.contiguous();

    const int64_t B = xc.size(0), T = xc.size(1), I = xc.size(2);
    const int64_t H = whh.size(1), G = 4 * H;
    TORCH_CHECK(wih.size(0) == G && wih.size(1) == I, "w_ih shape");

    // input projections for all steps at once: (B*T, 4H)
    auto xg = at::empty({B, T, G}, xc.options());
    rows_times_wt(xc.data_ptr<float>(), wih.data_ptr<float>(), bih.data_ptr<float>(),
                  bhh.data_ptr<float>(), xg.data_ptr<float>(), B * T, I, G);

    auto out = at::empty({B, T, H}, xc.options());
    auto h = h0.contiguous().clone();
    auto c = c0.contiguous().clone();
    auto gates = at::empty({B, G}, xc.options());

    float* hp = h.data_ptr<float>();
    float* cp = c.data_ptr<float>();
    float* gp = gates.data_ptr<float>();
    const float* xgp = xg.data_ptr<float>();
    const float* whp = whh.data_ptr<float>();
    float* op = out.data_ptr<float>();

    for (int64_t t = 0; t < T; ++t) {
        // gates = xg[:, t] + h @ w_hh^T
        at::parallel_for(0, G, 16, [&](int64_t n0, int64_t n1) {
            for (int64_t n = n0; n < n1; ++n) {
                const float* wr = whp + n * H;
                for (int64_t b = 0; b < B; ++b) {
                    const float* hr = hp + b * H;
                    float acc = 0.f;
                    for (int64_t k = 0; k < H; ++k) acc += hr[k] * wr[k];
                    gp[b * G + n] = acc + xgp[(b * T + t) * G + n];
                }
            }
        });
        // cell update
        for (int64_t b = 0; b < B; ++b) {
            const float* gr = gp + b * G;
            for (int64_t j = 0; j < H; ++j) {
                const float ig = sigmoidf(gr[j]);
                const float fg = sigmoidf(gr[H + j]);
                const float gg = std::tanh(gr[2 * H + j]);
                const float og = sigmoidf(gr[3 * H + j]);
                const float cn = fg * cp[b * H + j] + ig * gg;
                const float hn = og * std::tanh(cn);
                cp[b * H + j] = cn;
                hp[b * H + j] = hn;
                op[(b * T + t) * H + j] = hn;
            }
        }
    }
    return std::make_tuple(out, h, c);
}

torch::Tensor linear_forward(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
    auto xc = x.contiguous();
    auto wc = w.contiguous();
    auto bc = b.contiguous();
    const int64_t R = xc.size(0), K = xc.size(1), N = wc.size(0);
    auto y = torch::empty({R, N}, xc.options());
    rows_times_wt(xc.data_ptr<float>(), wc.data_ptr<float>(), bc.data_ptr<float>(), nullptr,
                  y.data_ptr<float>(), R, K, N);
    return y;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("lstm_layer_forward", &lstm_layer_forward,
          py::arg("x"), py::arg("h0"), py::arg("c0"),
          py::arg("w_ih"), py::arg("w_hh"), py::arg("b_ih"), py::arg("b_hh"));
    m.def("linear_forward", &linear_forward, py::arg("x"), py::arg("weight"), py::arg("bias"));
}
"""

_lstm_ext = load_inline(
    name="kb_l3_035_lstm__modulelist_layers_allweights_tuple_return_parallelfor_properties",
    cpp_sources=lstm_cpp,
    extra_cflags=["-O3", "-march=native"],
    verbose=False,
)


class LSTMLayerKernel(nn.Module):
    """Runs one LSTM layer with the C++ kernel; the weights stay in the parent's nn.LSTM."""

    def __init__(self, layer_idx: int):
        super().__init__()
        self.layer_idx = layer_idx

    def forward(self, x: torch.Tensor, h0: torch.Tensor, c0: torch.Tensor,
                weights: List[torch.Tensor]) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        w_ih, w_hh, b_ih, b_hh = weights
        return _lstm_ext.lstm_layer_forward(x, h0, c0, w_ih, w_hh, b_ih, b_hh)


class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers, output_size, dropout=0.0):
        super(ModelNew, self).__init__()
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        # parameter holders (same names/init as the reference)
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers,
                            batch_first=True, dropout=dropout, bidirectional=False)
        self.fc = nn.Linear(hidden_size, output_size)
        self.layers = nn.ModuleList([LSTMLayerKernel(i) for i in range(num_layers)])
        if dropout > 0.0:
            warnings.warn("ModelNew: inter-layer dropout is not applied by the fused kernel")

    @property
    def layer_weights(self) -> List[List[torch.Tensor]]:
        return self.lstm.all_weights

    def forward(self, x: torch.Tensor, h0: Optional[torch.Tensor] = None,
                c0: Optional[torch.Tensor] = None) -> torch.Tensor:
        batch_size = x.size(0)
        if h0 is None:
            h0 = torch.randn(self.num_layers, batch_size, self.hidden_size, device=x.device, dtype=x.dtype)
        if c0 is None:
            c0 = torch.randn(self.num_layers, batch_size, self.hidden_size, device=x.device, dtype=x.dtype)

        out = x
        for layer, weights in zip(self.layers, self.layer_weights):
            out, _, _ = layer(out, h0[layer.layer_idx], c0[layer.layer_idx], weights)

        last = out[:, -1, :]
        return _lstm_ext.linear_forward(last, self.fc.weight, self.fc.bias)
