# corpus: problem=kb_l3_001_mlp device=cpu expect=accepted policy=both
# style: hidden activations in persistent workspace buffers allocated in __init__ (resized when the batch changes), filled by a void out= kernel; the last layer returns a fresh tensor
# class: 8
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>

// One MLP layer: out = x @ W^T + b, with ReLU when asked; columns of the output are split across threads.
static void linear_act_kernel(const float* x, const float* w, const float* b, float* out, int64_t rows,
                              int64_t in_features, int64_t out_features, bool apply_relu) {
    at::parallel_for(0, out_features, 16, [&](int64_t c0, int64_t c1) {
        for (int64_t r = 0; r < rows; ++r) {
            const float* xr = x + r * in_features;
            for (int64_t c = c0; c < c1; ++c) {
                const float* wr = w + c * in_features;
                float acc = b[c];
                for (int64_t k = 0; k < in_features; ++k) acc += xr[k] * wr[k];
                out[r * out_features + c] = (apply_relu && acc < 0.0f) ? 0.0f : acc;
            }
        }
    });
}

void linear_act_out(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, torch::Tensor out, bool apply_relu) {
    TORCH_CHECK(x.dim() == 2 && weight.dim() == 2, "linear_act_out: 2-D tensors expected");
    TORCH_CHECK(x.size(1) == weight.size(1), "linear_act_out: in_features mismatch");
    TORCH_CHECK(out.is_contiguous() && out.size(0) == x.size(0) && out.size(1) == weight.size(0),
                "linear_act_out: out must be a contiguous (batch, out_features) tensor");
    auto xc = x.contiguous(), wc = weight.contiguous(), bc = bias.contiguous();
    linear_act_kernel(xc.data_ptr<float>(), wc.data_ptr<float>(), bc.data_ptr<float>(), out.data_ptr<float>(),
                      xc.size(0), xc.size(1), wc.size(0), apply_relu);
}

torch::Tensor linear_act(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, bool apply_relu) {
    auto out = torch::empty({x.size(0), weight.size(0)}, x.options());
    linear_act_out(x, weight, bias, out, apply_relu);
    return out;
}
"""

kernels = load_inline(
    name="corpus_mlp_linear_cpu",
    cpp_sources=source,
    functions=["linear_act_out", "linear_act"],
    extra_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, input_size, layer_sizes, output_size):
        super().__init__()
        sizes = [input_size] + list(layer_sizes) + [output_size]
        self.linears = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))
        self.workspace = [torch.empty(1, size) for size in layer_sizes]

    def forward(self, x):
        batch = x.size(0)
        for i, ws in enumerate(self.workspace):
            if ws.size(0) != batch or ws.dtype != x.dtype or ws.device != x.device:
                self.workspace[i] = torch.empty(batch, ws.size(1), dtype=x.dtype, device=x.device)
        h = x.contiguous()
        for linear, ws in zip(self.linears[:-1], self.workspace):
            kernels.linear_act_out(h, linear.weight, linear.bias, ws, True)
            h = ws
        last = self.linears[-1]
        return kernels.linear_act(h, last.weight, last.bias, False)
