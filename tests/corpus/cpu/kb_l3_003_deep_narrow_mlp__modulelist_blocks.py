# corpus: problem=kb_l3_003_deep_narrow_mlp device=cpu expect=accepted policy=both
# style: nn.ModuleList of fused Linear+ReLU blocks in a for loop, OpenMP GEMM
# class: 2,7
from typing import List

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

mlp_cpp = r"""
#include <torch/extension.h>
#include <algorithm>

// y = x @ w^T + b, optionally followed by ReLU.  x: (M, K), w: (N, K), b: (N).
// Each thread owns a range of output features; for one weight row it sweeps the batch
// four rows at a time so the weight row stays in cache while it is reused.
torch::Tensor linear_act(torch::Tensor x, torch::Tensor w, torch::Tensor b, bool relu) {
    TORCH_CHECK(x.device().is_cpu() && w.device().is_cpu() && b.device().is_cpu(), "CPU tensors expected");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && w.scalar_type() == torch::kFloat32 &&
                b.scalar_type() == torch::kFloat32, "float32 expected");
    TORCH_CHECK(x.dim() == 2 && w.dim() == 2 && x.size(1) == w.size(1), "shape mismatch");
    TORCH_CHECK(b.numel() == w.size(0), "bias size mismatch");
    auto xc = x.contiguous(), wc = w.contiguous(), bc = b.contiguous();
    const int64_t M = xc.size(0), K = xc.size(1), N = wc.size(0);
    auto y = torch::empty({M, N}, xc.options());
    const float* X = xc.data_ptr<float>();
    const float* W = wc.data_ptr<float>();
    const float* B = bc.data_ptr<float>();
    float* Y = y.data_ptr<float>();

    #pragma omp parallel for schedule(static)
    for (int64_t n = 0; n < N; ++n) {
        const float* wr = W + n * K;
        const float bias = B[n];
        int64_t m = 0;
        for (; m + 4 <= M; m += 4) {
            const float* x0 = X + (m + 0) * K;
            const float* x1 = X + (m + 1) * K;
            const float* x2 = X + (m + 2) * K;
            const float* x3 = X + (m + 3) * K;
            float a0 = 0.f, a1 = 0.f, a2 = 0.f, a3 = 0.f;
            #pragma omp simd reduction(+:a0, a1, a2, a3)
            for (int64_t k = 0; k < K; ++k) {
                const float wv = wr[k];
                a0 += x0[k] * wv; a1 += x1[k] * wv; a2 += x2[k] * wv; a3 += x3[k] * wv;
            }
            float r[4] = {a0 + bias, a1 + bias, a2 + bias, a3 + bias};
            for (int i = 0; i < 4; ++i) Y[(m + i) * N + n] = relu ? std::max(r[i], 0.f) : r[i];
        }
        for (; m < M; ++m) {
            const float* xr = X + m * K;
            float a = 0.f;
            #pragma omp simd reduction(+:a)
            for (int64_t k = 0; k < K; ++k) a += xr[k] * wr[k];
            a += bias;
            Y[m * N + n] = relu ? std::max(a, 0.f) : a;
        }
    }
    return y;
}
"""

mlp_ext = load_inline(
    name="kb_l3_003_deep_narrow_mlp__modulelist_blocks",
    cpp_sources=mlp_cpp,
    functions=["linear_act"],
    extra_cflags=["-O3", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    verbose=False,
)


class FusedLinear(nn.Module):
    """Linear (+ optional ReLU) computed by one C++ kernel; parameters laid out like nn.Linear."""

    def __init__(self, in_features: int, out_features: int, relu: bool) -> None:
        super().__init__()
        ref = nn.Linear(in_features, out_features)
        self.weight = ref.weight
        self.bias = ref.bias
        self.relu = relu

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return mlp_ext.linear_act(x, self.weight, self.bias, self.relu)

    def extra_repr(self) -> str:
        return f"in={self.weight.shape[1]}, out={self.weight.shape[0]}, relu={self.relu}"


class ModelNew(nn.Module):
    def __init__(self, input_size: int, hidden_layer_sizes: List[int], output_size: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList()
        width = input_size
        for hidden in hidden_layer_sizes:
            self.layers.append(FusedLinear(width, hidden, relu=True))
            width = hidden
        self.layers.append(FusedLinear(width, output_size, relu=False))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = x
        for layer in self.layers:
            out = layer(out)
        return out
