# corpus: problem=kb_l3_003_deep_narrow_mlp device=cpu expect=accepted policy=both
# style: nn.ModuleList of blocks each calling the kernel; templated C++ with a ReLU flag; weights from nn.Linear layers (blind round 8)
# class: 1, 2
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

batch_size = 1024
input_size = 8192
hidden_layer_sizes = [1024] * 16
output_size = 8192

mlp_cpp = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <cstring>
#include <cstdlib>
#include <algorithm>

namespace mlp {

typedef float v16 __attribute__((vector_size(64)));
constexpr int MR = 6, NR = 32, KC = 256, MC = 96, NC = 256;

inline void kernel_6x32(int kc, const float* __restrict A, const float* __restrict B, float* __restrict T) {
    v16 c[MR][2];
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) { c[r][0] = (v16){}; c[r][1] = (v16){}; }
    for (int k = 0; k < kc; ++k) {
        v16 b0, b1;
        std::memcpy(&b0, B + k * NR, 64);
        std::memcpy(&b1, B + k * NR + 16, 64);
#pragma GCC unroll 6
        for (int r = 0; r < MR; ++r) {
            const float a = A[k * MR + r];
            c[r][0] += a * b0;
            c[r][1] += a * b1;
        }
    }
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) {
        std::memcpy(T + r * NR, &c[r][0], 64);
        std::memcpy(T + r * NR + 16, &c[r][1], 64);
    }
}

template <bool RELU>
void linear_impl(const float* X, const float* Wt, const float* bias, float* Y, int64_t M, int64_t N, int64_t K) {
    const int64_t mt = (M + MC - 1) / MC, nt = (N + NC - 1) / NC;
    at::parallel_for(0, mt * nt, 1, [&](int64_t begin, int64_t end) {
        float* Ap = static_cast<float*>(std::aligned_alloc(64, sizeof(float) * MC * KC));
        float* Bp = static_cast<float*>(std::aligned_alloc(64, sizeof(float) * NC * KC));
        alignas(64) float T[MR * NR];
        for (int64_t t = begin; t < end; ++t) {
            const int64_t i0 = (t % mt) * MC, j0 = (t / mt) * NC;
            const int64_t mc = std::min<int64_t>(MC, M - i0), nc = std::min<int64_t>(NC, N - j0);
            for (int64_t k0 = 0; k0 < K; k0 += KC) {
                const int kc = (int)std::min<int64_t>(KC, K - k0);
                const bool last = k0 + KC >= K;
                for (int64_t jp = 0; jp < nc; jp += NR)
                    for (int jj = 0; jj < NR; ++jj) {
                        float* d = Bp + jp * kc + jj;
                        if (jp + jj < nc) { const float* s = Wt + (j0 + jp + jj) * K + k0; for (int kk = 0; kk < kc; ++kk) d[kk * NR] = s[kk]; }
                        else for (int kk = 0; kk < kc; ++kk) d[kk * NR] = 0.f;
                    }
                for (int64_t ip = 0; ip < mc; ip += MR)
                    for (int r = 0; r < MR; ++r) {
                        float* d = Ap + ip * kc + r;
                        if (ip + r < mc) { const float* s = X + (i0 + ip + r) * K + k0; for (int kk = 0; kk < kc; ++kk) d[kk * MR] = s[kk]; }
                        else for (int kk = 0; kk < kc; ++kk) d[kk * MR] = 0.f;
                    }
                for (int64_t jp = 0; jp < nc; jp += NR)
                    for (int64_t ip = 0; ip < mc; ip += MR) {
                        kernel_6x32(kc, Ap + ip * kc, Bp + jp * kc, T);
                        const int rows = (int)std::min<int64_t>(MR, mc - ip), cols = (int)std::min<int64_t>(NR, nc - jp);
                        for (int r = 0; r < rows; ++r) {
                            float* y = Y + (i0 + ip + r) * N + j0 + jp;
                            const float* s = T + r * NR;
                            if (!last) {
                                if (k0 == 0) for (int j = 0; j < cols; ++j) y[j] = s[j];
                                else         for (int j = 0; j < cols; ++j) y[j] += s[j];
                            } else {
                                for (int j = 0; j < cols; ++j) {
                                    float v = (k0 == 0 ? s[j] : y[j] + s[j]) + bias[j0 + jp + j];
                                    if (RELU) v = v > 0.f ? v : 0.f;
                                    y[j] = v;
                                }
                            }
                        }
                    }
            }
        }
        std::free(Ap);
        std::free(Bp);
    });
}

}  // namespace mlp

torch::Tensor linear_act(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, bool relu) {
    TORCH_CHECK(x.dim() == 2 && weight.dim() == 2 && x.size(1) == weight.size(1), "linear_act: shape mismatch");
    TORCH_CHECK(bias.numel() == weight.size(0), "linear_act: bias mismatch");
    TORCH_CHECK(x.scalar_type() == torch::kFloat, "linear_act: float32 only");
    auto xc = x.contiguous(), wc = weight.contiguous(), bc = bias.contiguous();
    const int64_t M = xc.size(0), K = xc.size(1), N = wc.size(0);
    auto y = torch::empty({M, N}, xc.options());
    if (relu)
        mlp::linear_impl<true>(xc.data_ptr<float>(), wc.data_ptr<float>(), bc.data_ptr<float>(), y.data_ptr<float>(), M, N, K);
    else
        mlp::linear_impl<false>(xc.data_ptr<float>(), wc.data_ptr<float>(), bc.data_ptr<float>(), y.data_ptr<float>(), M, N, K);
    return y;
}
"""

mlp_ext = load_inline(
    name="kb_deep_narrow_mlp_blocks",
    cpp_sources=mlp_cpp,
    functions=["linear_act"],
    extra_cflags=["-O3", "-march=native", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    verbose=False,
)


class FusedLinearBlock(nn.Module):
    """nn.Linear (+ optional ReLU) evaluated by the C++ kernel."""

    def __init__(self, in_f: int, out_f: int, relu: bool):
        super().__init__()
        self.fc = nn.Linear(in_f, out_f)
        self.relu = relu

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return mlp_ext.linear_act(x, self.fc.weight, self.fc.bias, self.relu)


class ModelNew(nn.Module):
    def __init__(self, input_size: int, hidden_layer_sizes: list, output_size: int):
        super().__init__()
        blocks = []
        width = input_size
        # same creation order as the reference Sequential -> identical weights for the same seed
        for hidden in hidden_layer_sizes:
            blocks.append(FusedLinearBlock(width, hidden, relu=True))
            width = hidden
        blocks.append(FusedLinearBlock(width, output_size, relu=False))
        self.blocks = nn.ModuleList(blocks)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for blk in self.blocks:
            x = blk(x)
        return x


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_layer_sizes, output_size]
