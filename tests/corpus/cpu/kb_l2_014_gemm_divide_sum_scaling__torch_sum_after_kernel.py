# corpus: problem=kb_l2_014_gemm_divide_sum_scaling device=cpu expect=accepted policy=kernelbench
# style: a custom GEMM+divide kernel, then PyTorch's sum and scaling in forward
# class: 3
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>

// out[b] = scale * sum_h (x[b] . W[h]) / 2, the GEMM never materialised: one pass per batch row.
torch::Tensor gemm_div_sum_scale(torch::Tensor x, torch::Tensor weight, double scaling_factor) {
    TORCH_CHECK(x.dim() == 2 && weight.dim() == 2, "gemm_div_sum_scale: 2-D tensors expected");
    if (x.size(1) != weight.size(1)) {
        TORCH_CHECK(false, "gemm_div_sum_scale: x has ", x.size(1), " features, weight expects ", weight.size(1));
    }
    auto xc = x.contiguous(), wc = weight.contiguous();
    const int64_t batch_size = xc.size(0), input_size = xc.size(1), hidden_size = wc.size(0);
    auto out = torch::empty({batch_size, 1}, xc.options());
    const float* px = xc.data_ptr<float>();
    const float* pw = wc.data_ptr<float>();
    float* po = out.data_ptr<float>();
    const float factor = static_cast<float>(scaling_factor) * 0.5f;
    at::parallel_for(0, batch_size, 8, [&](int64_t b0, int64_t b1) {
        for (int64_t b = b0; b < b1; ++b) {
            const float* xr = px + b * input_size;
            float total = 0.0f;
            for (int64_t h = 0; h < hidden_size; ++h) {
                const float* wr = pw + h * input_size;
                float dot = 0.0f;
                for (int64_t k = 0; k < input_size; ++k) dot += xr[k] * wr[k];
                total += dot;
            }
            po[b] = total * factor;
        }
    });
    return out;
}

// x @ W^T / 2 as a (batch, hidden) tensor.
torch::Tensor gemm_div(torch::Tensor x, torch::Tensor weight) {
    TORCH_CHECK(x.size(1) == weight.size(1), "gemm_div: in_features mismatch");
    auto xc = x.contiguous(), wc = weight.contiguous();
    const int64_t batch_size = xc.size(0), input_size = xc.size(1), hidden_size = wc.size(0);
    auto out = torch::empty({batch_size, hidden_size}, xc.options());
    const float* px = xc.data_ptr<float>();
    const float* pw = wc.data_ptr<float>();
    float* po = out.data_ptr<float>();
    at::parallel_for(0, batch_size * hidden_size, 256, [&](int64_t begin, int64_t end) {
        for (int64_t idx = begin; idx < end; ++idx) {
            const float* xr = px + (idx / hidden_size) * input_size;
            const float* wr = pw + (idx % hidden_size) * input_size;
            float dot = 0.0f;
            for (int64_t k = 0; k < input_size; ++k) dot += xr[k] * wr[k];
            po[idx] = dot / 2.0f;
        }
    });
    return out;
}
"""

gemm_module = load_inline(
    name="corpus_gemm_div_sum_cpu",
    cpp_sources=cpp_source,
    functions=["gemm_div_sum_scale", "gemm_div"],
    extra_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_size, scaling_factor):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(hidden_size, input_size))
        self.scaling_factor = scaling_factor
        self.gemm_div = gemm_module.gemm_div

    def forward(self, x):
        x = self.gemm_div(x, self.weight)
        x = torch.sum(x, dim=1, keepdim=True)
        return x * self.scaling_factor
