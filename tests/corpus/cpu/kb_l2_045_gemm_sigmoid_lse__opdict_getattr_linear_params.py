# corpus: problem=kb_l2_045_gemm_sigmoid_lse device=cpu expect=accepted policy=both
# style: dict of kernels from getattr(ext, name), layers picked by getattr(self, name) over a class-level constant tuple, nn.Linear weights passed .contiguous(), two fused kernels (blind round 11; dynamic-code static_reject before constant loops were written out)
# class: 2
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Gemm -> Sigmoid -> Gemm -> LogSumExp(dim=1), two fused C++ kernels:
#   linear_sigmoid   : h = sigmoid(x @ W1^T + b1)
#   linear_logsumexp : y = logsumexp(h @ W2^T + b2, dim=1)   (row never materialised
#                      in a separate tensor: each thread keeps its own row buffer)

cpp_source = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <cmath>
#include <vector>
#include <algorithm>
#include <limits>

namespace {

// dot product with 8 independent accumulators (lets the compiler vectorise)
inline float dot8(const float* __restrict__ a, const float* __restrict__ b, int64_t n) {
    float acc[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
    int64_t k = 0;
    for (; k + 8 <= n; k += 8) {
        for (int u = 0; u < 8; ++u) acc[u] += a[k + u] * b[k + u];
    }
    float s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    for (; k < n; ++k) s += a[k] * b[k];
    return s;
}

constexpr int64_t kColBlock = 64;   // weight rows kept hot in cache per block

void check_linear_args(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b) {
    TORCH_CHECK(x.dim() == 2 && w.dim() == 2 && b.dim() == 1, "expected 2D x, 2D weight, 1D bias");
    TORCH_CHECK(x.size(1) == w.size(1), "in_features mismatch");
    TORCH_CHECK(w.size(0) == b.size(0), "out_features mismatch");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && w.scalar_type() == torch::kFloat32 &&
                b.scalar_type() == torch::kFloat32, "float32 only");
    TORCH_CHECK(x.is_contiguous() && w.is_contiguous() && b.is_contiguous(), "contiguous inputs required");
}

}  // namespace

torch::Tensor linear_sigmoid(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
    check_linear_args(x, w, b);
    const int64_t M = x.size(0), K = x.size(1), N = w.size(0);
    auto out = torch::empty({M, N}, x.options());
    const float* xp = x.data_ptr<float>();
    const float* wp = w.data_ptr<float>();
    const float* bp = b.data_ptr<float>();
    float* op = out.data_ptr<float>();
    const int64_t n_blocks = (N + kColBlock - 1) / kColBlock;
    // parallel over (column block) so each thread streams one slab of W through all rows
    at::parallel_for(0, n_blocks, 1, [&](int64_t nb0, int64_t nb1) {
        for (int64_t nb = nb0; nb < nb1; ++nb) {
            const int64_t j0 = nb * kColBlock, j1 = std::min(N, j0 + kColBlock);
            for (int64_t i = 0; i < M; ++i) {
                const float* xr = xp + i * K;
                float* orow = op + i * N;
                for (int64_t j = j0; j < j1; ++j) {
                    const float z = dot8(xr, wp + j * K, K) + bp[j];
                    orow[j] = 1.0f / (1.0f + std::exp(-z));
                }
            }
        }
    });
    return out;
}

torch::Tensor linear_logsumexp(torch::Tensor h, torch::Tensor w, torch::Tensor b) {
    check_linear_args(h, w, b);
    const int64_t M = h.size(0), K = h.size(1), N = w.size(0);
    auto out = torch::empty({M}, h.options());
    const float* hp = h.data_ptr<float>();
    const float* wp = w.data_ptr<float>();
    const float* bp = b.data_ptr<float>();
    float* op = out.data_ptr<float>();
    at::parallel_for(0, M, 1, [&](int64_t i0, int64_t i1) {
        std::vector<float> row(N);
        for (int64_t i = i0; i < i1; ++i) {
            const float* hr = hp + i * K;
            float mx = -std::numeric_limits<float>::infinity();
            for (int64_t j = 0; j < N; ++j) {
                const float z = dot8(hr, wp + j * K, K) + bp[j];
                row[j] = z;
                mx = std::max(mx, z);
            }
            if (std::isinf(mx)) { op[i] = mx; continue; }
            double s = 0.0;
            for (int64_t j = 0; j < N; ++j) s += std::exp(static_cast<double>(row[j] - mx));
            op[i] = mx + static_cast<float>(std::log(s));
        }
    });
    return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("linear_sigmoid", &linear_sigmoid, "fused linear + sigmoid");
    m.def("linear_logsumexp", &linear_logsumexp, "fused linear + logsumexp(dim=1)");
}
"""

fused_ext = load_inline(
    name="kb_gemm_sigmoid_lse_ext",
    cpp_sources=cpp_source,
    extra_cflags=["-O3", "-march=native"],
    verbose=False,
)


class ModelNew(nn.Module):
    """
    Same parameters as the reference (linear1 / linear2 nn.Linear modules, so the
    same seed gives the same weights); the math runs in the fused C++ kernels.
    """

    _STAGES = (("linear1", "linear_sigmoid"), ("linear2", "linear_logsumexp"))

    def __init__(self, input_size, hidden_size, output_size):
        super(ModelNew, self).__init__()
        self.linear1 = nn.Linear(input_size, hidden_size)
        self.linear2 = nn.Linear(hidden_size, output_size)
        # pick the kernel for each stage once, by name
        self.ops = {layer: getattr(fused_ext, kernel) for layer, kernel in self._STAGES}

    def forward(self, x):
        x = x.contiguous()
        for layer_name, _ in self._STAGES:
            layer = getattr(self, layer_name)
            x = self.ops[layer_name](x, layer.weight.contiguous(), layer.bias.contiguous())
        return x


if __name__ == "__main__":
    torch.manual_seed(1)
    m = ModelNew(64, 96, 40)
    x = torch.rand(33, 64)
    with torch.no_grad():
        ref = torch.logsumexp(m.linear2(torch.sigmoid(m.linear1(x))), dim=1)
        got = m(x)
    print("max abs diff", (ref - got).abs().max().item())
