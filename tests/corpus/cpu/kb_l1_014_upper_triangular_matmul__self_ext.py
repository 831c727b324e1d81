# corpus: problem=kb_l1_014_upper_triangular_matmul device=cpu expect=accepted policy=both
# style: triangular-input kernel reached as self.ext.triu_matmul, inputs made contiguous in Python
# class: 5, 1
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_src = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>

// Products of triangular matrices that skip the zero halves: for upper-triangular A and B, C[i][j] (j >= i) sums
// A[i][k] * B[k][j] over i <= k <= j only; the lower-triangular case mirrors it. The other half of C is zero.
static void check_square(const torch::Tensor& A, const torch::Tensor& B, const char* who) {
    TORCH_CHECK(A.dim() == 2 && A.size(0) == A.size(1), who, ": A must be square");
    TORCH_CHECK(B.sizes() == A.sizes(), who, ": A and B must have the same shape");
    TORCH_CHECK(A.scalar_type() == torch::kFloat32 && B.scalar_type() == torch::kFloat32, who, ": float32 only");
}

torch::Tensor triu_matmul(torch::Tensor A, torch::Tensor B) {
    check_square(A, B, "triu_matmul");
    auto a = A.contiguous(), b = B.contiguous();
    const int64_t n = a.size(0);
    auto c = torch::zeros_like(a);
    const float* pa = a.data_ptr<float>();
    const float* pb = b.data_ptr<float>();
    float* pc = c.data_ptr<float>();
    at::parallel_for(0, n, 8, [&](int64_t r0, int64_t r1) {
        for (int64_t i = r0; i < r1; ++i) {
            float* crow = pc + i * n;
            for (int64_t k = i; k < n; ++k) {
                const float aik = pa[i * n + k];
                const float* brow = pb + k * n;
                for (int64_t j = k; j < n; ++j) crow[j] += aik * brow[j];
            }
        }
    });
    return c;
}

torch::Tensor tril_matmul(torch::Tensor A, torch::Tensor B) {
    check_square(A, B, "tril_matmul");
    auto a = A.contiguous(), b = B.contiguous();
    const int64_t n = a.size(0);
    auto c = torch::zeros_like(a);
    const float* pa = a.data_ptr<float>();
    const float* pb = b.data_ptr<float>();
    float* pc = c.data_ptr<float>();
    at::parallel_for(0, n, 8, [&](int64_t r0, int64_t r1) {
        for (int64_t i = r0; i < r1; ++i) {
            float* crow = pc + i * n;
            for (int64_t k = 0; k <= i; ++k) {
                const float aik = pa[i * n + k];
                const float* brow = pb + k * n;
                for (int64_t j = 0; j <= k; ++j) crow[j] += aik * brow[j];
            }
        }
    });
    return c;
}
"""

ext = load_inline(
    name="corpus_triangular_matmul_cpu",
    cpp_sources=cpp_src,
    functions=["triu_matmul", "tril_matmul"],
    extra_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ext = ext

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return self.ext.triu_matmul(A.contiguous(), B.contiguous())
