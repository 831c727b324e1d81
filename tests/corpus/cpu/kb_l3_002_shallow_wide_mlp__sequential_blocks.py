# corpus: problem=kb_l3_002_shallow_wide_mlp device=cpu expect=accepted policy=both
# style: nn.Sequential of the candidate's own fused Linear+ReLU blocks, weights as Parameters drawn like nn.Linear's
# class: 2
import math

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
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

fused_linear = load_inline(
    name="corpus_mlp_linear_cpu",
    cpp_sources=cpp_source,
    functions=["linear_act_out", "linear_act"],
    extra_cflags=["-O3"],
)


class FusedLinear(nn.Module):
    def __init__(self, in_features, out_features, relu):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out_features, in_features))
        self.bias = nn.Parameter(torch.empty(out_features))
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        bound = 1.0 / math.sqrt(in_features)
        nn.init.uniform_(self.bias, -bound, bound)
        self.relu = relu

    def forward(self, x):
        return fused_linear.linear_act(x, self.weight, self.bias, self.relu)


class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_layer_sizes, output_size):
        super().__init__()
        blocks = []
        current = input_size
        for hidden in hidden_layer_sizes:
            blocks.append(FusedLinear(current, hidden, True))
            current = hidden
        blocks.append(FusedLinear(current, output_size, False))
        self.network = nn.Sequential(*blocks)

    def forward(self, x):
        return self.network(x)
