# corpus: problem=kb_l2_014_gemm_divide_sum_scaling device=cpu expect=accepted policy=both
# style: std::thread pool, register_buffer scale, column-sum rewrite of W, self.fused = ext.fn alias, -lpthread, __main__ self-test seeding torch
# class: 1,8
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

batch_size = 128
input_size = 10
hidden_size = 20
scaling_factor = 1.5

source = r"""
#include <torch/extension.h>
#include <thread>
#include <vector>
#include <algorithm>

// out[b, 0] = scale * sum_h (x[b] . W[h]) / 2  ==  (scale / 2) * (x[b] . colsum(W))
torch::Tensor gemm_div_sum_scale(torch::Tensor x, torch::Tensor weight, torch::Tensor scale) {
    TORCH_CHECK(x.dim() == 2, "x must be (batch, input_size)");
    TORCH_CHECK(weight.dim() == 2 && weight.size(1) == x.size(1), "weight must be (hidden, input_size)");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32, "float32 only");
    TORCH_CHECK(scale.numel() == 1, "scale must be a scalar tensor");

    auto xc = x.contiguous();
    auto wc = weight.contiguous();
    const int64_t B = xc.size(0), I = xc.size(1), H = wc.size(0);
    const float s = scale.to(torch::kFloat32).item<float>() * 0.5f;

    // column sums of W (small: I entries)
    std::vector<float> wsum(I, 0.0f);
    const float* pw = wc.data_ptr<float>();
    for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < I; ++i) wsum[i] += pw[h * I + i];

    auto out = torch::empty({B, 1}, xc.options());
    const float* px = xc.data_ptr<float>();
    float* po = out.data_ptr<float>();

    auto worker = [&](int64_t b0, int64_t b1) {
        for (int64_t b = b0; b < b1; ++b) {
            float acc = 0.0f;
            const float* row = px + b * I;
            for (int64_t i = 0; i < I; ++i) acc += row[i] * wsum[i];
            po[b] = acc * s;
        }
    };

    int64_t nthreads = std::max<int64_t>(1, std::min<int64_t>((int64_t)std::thread::hardware_concurrency(), B / 64));
    if (nthreads <= 1) {
        worker(0, B);
    } else {
        std::vector<std::thread> pool;
        const int64_t chunk = (B + nthreads - 1) / nthreads;
        for (int64_t t = 0; t < nthreads; ++t) {
            const int64_t b0 = t * chunk, b1 = std::min(B, b0 + chunk);
            if (b0 < b1) pool.emplace_back(worker, b0, b1);
        }
        for (auto& th : pool) th.join();
    }
    return out;
}
"""

ext = load_inline(
    name="kb_l2_014_gemm_div_sum_scale",
    cpp_sources=source,
    functions=["gemm_div_sum_scale"],
    extra_cflags=["-O3", "-std=c++17"],
    extra_ldflags=["-lpthread"],
)


class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_size, scaling_factor):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(hidden_size, input_size))
        self.scaling_factor = scaling_factor
        self.register_buffer("scale", torch.tensor(float(scaling_factor)))
        self.fused = ext.gemm_div_sum_scale

    def forward(self, x):
        return self.fused(x, self.weight, self.scale)


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, scaling_factor]


if __name__ == "__main__":
    torch.manual_seed(0)
    m = ModelNew(input_size, hidden_size, scaling_factor)
    x = get_inputs()[0]
    ref = torch.sum(x @ m.weight.T / 2, dim=1, keepdim=True) * scaling_factor
    out = m(x)
    print("max abs diff", (out - ref).abs().max().item())
