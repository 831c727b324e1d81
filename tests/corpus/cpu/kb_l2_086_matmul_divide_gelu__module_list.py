# corpus: problem=kb_l2_086_matmul_divide_gelu device=cpu expect=accepted policy=both
# style: an nn.ModuleList holding the candidate's fused block, which binds the kernel in its own __init__
# class: 1, 2
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_src = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <cmath>

// gelu((x @ W^T + b) / divisor) with the exact (erf) GELU, fused per output element.
torch::Tensor linear_div_gelu(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double divisor) {
    TORCH_CHECK(x.dim() == 2, "linear_div_gelu: x must be (batch, input_size)");
    TORCH_CHECK(weight.size(1) == x.size(1), "linear_div_gelu: weight is ", weight.size(0), "x", weight.size(1),
                ", input has ", x.size(1), " features");
    TORCH_CHECK(divisor != 0.0, "linear_div_gelu: divisor must be nonzero");
    auto xc = x.contiguous(), wc = weight.contiguous(), bc = bias.contiguous();
    const int64_t batch_size = xc.size(0), input_size = xc.size(1), output_size = wc.size(0);
    auto out = torch::empty({batch_size, output_size}, xc.options());
    const float* px = xc.data_ptr<float>();
    const float* pw = wc.data_ptr<float>();
    const float* pb = bc.data_ptr<float>();
    float* po = out.data_ptr<float>();
    const float inv_div = static_cast<float>(1.0 / divisor);
    const float inv_sqrt2 = 0.70710678118654752f;
    at::parallel_for(0, batch_size, 1, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const float* xr = px + r * input_size;
            for (int64_t c = 0; c < output_size; ++c) {
                const float* wr = pw + c * input_size;
                float acc = 0.0f;
                for (int64_t k = 0; k < input_size; ++k) acc += xr[k] * wr[k];
                const float v = (acc + pb[c]) * inv_div;
                po[r * output_size + c] = 0.5f * v * (1.0f + std::erf(v * inv_sqrt2));
            }
        }
    });
    return out;
}
"""

ext = load_inline(
    name="corpus_matmul_div_gelu_cpu",
    cpp_sources=cpp_src,
    functions=["linear_div_gelu"],
    extra_cflags=["-O3"],
)


class LinearDivGELU(nn.Module):
    def __init__(self, input_size, output_size, divisor):
        super().__init__()
        self.linear = nn.Linear(input_size, output_size)
        self.divisor = divisor
        self.kernel = ext.linear_div_gelu

    def forward(self, x):
        return self.kernel(x, self.linear.weight, self.linear.bias, self.divisor)


class ModelNew(nn.Module):
    def __init__(self, input_size, output_size, divisor):
        super().__init__()
        self.layers = nn.ModuleList([LinearDivGELU(input_size, output_size, divisor)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x
