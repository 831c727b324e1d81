# corpus: problem=kb_l2_012_gemm_multiply_leakyrelu device=cpu expect=accepted policy=both
# style: std::thread pool; optional bias; weight.t().contiguous(); self.op = ext.op; verbose=True; .float()/.to
# class: 1
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

batch_size = 128
in_features = 1024
out_features = 512
multiplier = 2.0
negative_slope = 0.1

fused_src = r"""
#include <torch/extension.h>
#include <thread>
#include <vector>
#include <algorithm>

// y = leaky_relu((x @ w_t + b) * mult)   with x: (M, K), w_t: (K, N), b: (N)
torch::Tensor linear_mul_leaky(torch::Tensor x, torch::Tensor w_t, c10::optional<torch::Tensor> bias,
                               double multiplier, double negative_slope) {
    TORCH_CHECK(x.dim() == 2 && w_t.dim() == 2, "linear_mul_leaky: 2-D operands");
    TORCH_CHECK(x.size(1) == w_t.size(0), "linear_mul_leaky: inner dims differ");
    TORCH_CHECK(x.scalar_type() == torch::kFloat && w_t.scalar_type() == torch::kFloat, "float32 only");
    x = x.contiguous();
    w_t = w_t.contiguous();
    const int64_t M = x.size(0), K = x.size(1), N = w_t.size(1);
    torch::Tensor b;
    if (bias.has_value()) {
        b = bias.value().contiguous();
        TORCH_CHECK(b.numel() == N, "bias size");
    }
    auto y = torch::empty({M, N}, x.options());
    const float* px = x.data_ptr<float>();
    const float* pw = w_t.data_ptr<float>();
    const float* pb = b.defined() ? b.data_ptr<float>() : nullptr;
    float* py = y.data_ptr<float>();
    const float mult = (float)multiplier;
    const float slope = (float)negative_slope;

    auto worker = [&](int64_t r0, int64_t r1) {
        std::vector<float> acc(N);
        for (int64_t i = r0; i < r1; ++i) {
            std::fill(acc.begin(), acc.end(), 0.f);
            const float* xi = px + i * K;
            for (int64_t k = 0; k < K; ++k) {
                const float a = xi[k];
                const float* wk = pw + k * N;
                for (int64_t j = 0; j < N; ++j) acc[j] += a * wk[j];
            }
            float* yi = py + i * N;
            for (int64_t j = 0; j < N; ++j) {
                float v = (acc[j] + (pb ? pb[j] : 0.f)) * mult;
                yi[j] = v > 0.f ? v : v * slope;
            }
        }
    };

    int64_t nthreads = std::max<int64_t>(1, std::min<int64_t>((int64_t)std::thread::hardware_concurrency(), M));
    std::vector<std::thread> pool;
    const int64_t per = (M + nthreads - 1) / nthreads;
    for (int64_t t = 0; t < nthreads; ++t) {
        int64_t r0 = t * per, r1 = std::min(M, r0 + per);
        if (r0 >= r1) break;
        pool.emplace_back(worker, r0, r1);
    }
    for (auto& th : pool) th.join();
    return y;
}
"""

fused_ext = load_inline(
    name="kb_gemm_mul_leaky_threads",
    cpp_sources=fused_src,
    functions=["linear_mul_leaky"],
    extra_cflags=["-O3", "-march=native", "-pthread"],
    extra_ldflags=["-pthread"],
    verbose=True,
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, multiplier, negative_slope):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.multiplier = multiplier
        self.negative_slope = negative_slope
        self.op = fused_ext.linear_mul_leaky

    def forward(self, x):
        w_t = self.gemm.weight.t().contiguous()  # (in, out) for row-major streaming
        y = self.op(x.float(), w_t, self.gemm.bias, float(self.multiplier), float(self.negative_slope))
        return y.to(x.dtype)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, multiplier, negative_slope]
