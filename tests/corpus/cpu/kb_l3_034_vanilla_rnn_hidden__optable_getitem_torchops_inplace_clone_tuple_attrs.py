# corpus: problem=kb_l3_034_vanilla_rnn_hidden device=cpu expect=accepted policy=kernelbench
# style: an OpTable class whose __getitem__ returns getattr(torch.ops.<own namespace>, name), TORCH_LIBRARY ops with Tensor(a!) outputs, an op returning two tensors unpacked into attributes, in-place step on h0.clone() (blind round 12; strict torch-compute static reject before the candidate's own operator namespace was told from torch's)
# class: 2
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Vanilla RNN (tanh cell + output projection per step) with C++ ops registered
# through TORCH_LIBRARY and called as torch.ops.kb_rnn34.<op>.
#   split_i2h  : splits i2h.weight into its input / hidden column blocks (two tensors)
#   rnn_step_  : h <- tanh(W_x x_t + W_h h + b), in place on h
#   linear_out : out <- h @ W^T + b, written into a preallocated slice

rnn_cpp = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <cmath>
#include <tuple>
#include <vector>

static inline float dotf(const float* a, const float* b, int64_t n) {
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
    int64_t k = 0;
    for (; k + 4 <= n; k += 4) {
        acc[0] += a[k] * b[k];
        acc[1] += a[k + 1] * b[k + 1];
        acc[2] += a[k + 2] * b[k + 2];
        acc[3] += a[k + 3] * b[k + 3];
    }
    float s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    for (; k < n; ++k) s += a[k] * b[k];
    return s;
}

std::tuple<at::Tensor, at::Tensor> split_i2h(const at::Tensor& w, int64_t input_size) {
    TORCH_CHECK(w.dim() == 2 && w.scalar_type() == at::kFloat, "split_i2h: 2-D float weight expected");
    TORCH_CHECK(input_size > 0 && input_size < w.size(1), "split_i2h: bad input_size");
    const int64_t H = w.size(0), C = w.size(1), I = input_size, Hh = C - I;
    auto wc = w.contiguous();
    auto w_x = at::empty({H, I}, w.options());
    auto w_h = at::empty({H, Hh}, w.options());
    const float* src = wc.data_ptr<float>();
    float* dx = w_x.data_ptr<float>();
    float* dh = w_h.data_ptr<float>();
    at::parallel_for(0, H, 16, [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
            for (int64_t c = 0; c < I; ++c) dx[r * I + c] = src[r * C + c];
            for (int64_t c = 0; c < Hh; ++c) dh[r * Hh + c] = src[r * C + I + c];
        }
    });
    return std::make_tuple(w_x, w_h);
}

void rnn_step_(const at::Tensor& x_t, const at::Tensor& w_x, const at::Tensor& w_h,
               const at::Tensor& bias, at::Tensor& h) {
    TORCH_CHECK(x_t.is_contiguous() && w_x.is_contiguous() && w_h.is_contiguous() &&
                bias.is_contiguous() && h.is_contiguous(), "rnn_step_: contiguous tensors expected");
    TORCH_CHECK(x_t.scalar_type() == at::kFloat && h.scalar_type() == at::kFloat, "rnn_step_: float32 only");
    const int64_t B = x_t.size(0), I = x_t.size(1), H = h.size(1);
    TORCH_CHECK(h.size(0) == B && w_x.size(0) == H && w_x.size(1) == I && w_h.size(0) == H &&
                w_h.size(1) == H && bias.numel() == H, "rnn_step_: shape mismatch");
    const float* X = x_t.data_ptr<float>();
    const float* WX = w_x.data_ptr<float>();
    const float* WH = w_h.data_ptr<float>();
    const float* Bv = bias.data_ptr<float>();
    float* Hp = h.data_ptr<float>();
    at::parallel_for(0, B, 1, [&](int64_t b0, int64_t b1) {
        std::vector<float> prev(H);
        for (int64_t b = b0; b < b1; ++b) {
            float* hb = Hp + b * H;
            for (int64_t j = 0; j < H; ++j) prev[j] = hb[j];
            const float* xb = X + b * I;
            for (int64_t j = 0; j < H; ++j) {
                const float s = Bv[j] + dotf(WX + j * I, xb, I) + dotf(WH + j * H, prev.data(), H);
                hb[j] = std::tanh(s);
            }
        }
    });
}

void linear_out(const at::Tensor& x, const at::Tensor& w, const at::Tensor& bias, at::Tensor& out) {
    TORCH_CHECK(x.is_contiguous() && w.is_contiguous() && bias.is_contiguous() && out.is_contiguous(),
                "linear_out: contiguous tensors expected");
    const int64_t M = x.size(0), K = x.size(1), N = w.size(0);
    TORCH_CHECK(w.size(1) == K && bias.numel() == N && out.size(0) == M && out.size(1) == N,
                "linear_out: shape mismatch");
    const float* X = x.data_ptr<float>();
    const float* W = w.data_ptr<float>();
    const float* Bv = bias.data_ptr<float>();
    float* O = out.data_ptr<float>();
    at::parallel_for(0, M * N, 64, [&](int64_t b, int64_t e) {
        for (int64_t idx = b; idx < e; ++idx) {
            const int64_t i = idx / N, j = idx % N;
            O[idx] = Bv[j] + dotf(X + i * K, W + j * K, K);
        }
    });
}

TORCH_LIBRARY(kb_rnn34, m) {
    m.def("split_i2h(Tensor w, int input_size) -> (Tensor, Tensor)");
    m.def("rnn_step_(Tensor x_t, Tensor w_x, Tensor w_h, Tensor bias, Tensor(a!) h) -> ()");
    m.def("linear_out(Tensor x, Tensor w, Tensor bias, Tensor(a!) out) -> ()");
}

TORCH_LIBRARY_IMPL(kb_rnn34, CPU, m) {
    m.impl("split_i2h", &split_i2h);
    m.impl("rnn_step_", &rnn_step_);
    m.impl("linear_out", &linear_out);
}
"""

load_inline(
    name="kb_vanilla_rnn_hidden_ops",
    cpp_sources=rnn_cpp,
    is_python_module=False,
    extra_cflags=["-O3"],
    verbose=False,
)


class OpTable:
    """ops["name"] -> torch.ops.<namespace>.<name>"""

    def __init__(self, namespace):
        self._namespace = namespace

    def __getitem__(self, name):
        return getattr(self._namespace, name)


ops = OpTable(torch.ops.kb_rnn34)


class ModelNew(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, output_size: int):
        super(ModelNew, self).__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.output_size = output_size
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.h2o = nn.Linear(hidden_size, output_size)
        self.tanh = nn.Tanh()  # kept for parity with the reference; the kernel applies tanh

    def forward(self, x: torch.Tensor, h0: torch.Tensor) -> torch.Tensor:
        seq_len, batch_size, _ = x.size()
        x = x.contiguous()
        self.w_x, self.w_h = ops["split_i2h"](self.i2h.weight, self.input_size)
        b_ih = self.i2h.bias.contiguous()
        w_ho = self.h2o.weight.contiguous()
        b_ho = self.h2o.bias.contiguous()

        hidden = h0.to(x.device).contiguous().clone()  # updated in place each step
        outputs = torch.empty(seq_len, batch_size, self.output_size, dtype=x.dtype, device=x.device)
        for t in range(seq_len):
            ops["rnn_step_"](x[t], self.w_x, self.w_h, b_ih, hidden)
            ops["linear_out"](hidden, w_ho, b_ho, outputs[t])
        return outputs


batch_size = 8
input_size = 1024
hidden_size = 256
output_size = 128
sequence_length = 256


def get_inputs():
    return [
        torch.rand(sequence_length, batch_size, input_size),
        torch.rand(batch_size, hidden_size),
    ]


def get_init_inputs():
    return [input_size, hidden_size, output_size]
