# corpus: problem=kb_l1_014_upper_triangular_matmul device=cpu expect=accepted policy=both
# style: class ModelNew(Model), cuda_sources="", templated source skipping the zero half
# class: 5, 7
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

N = 257


class Model(nn.Module):
    """The product of two upper-triangular matrices (itself upper triangular)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.triu(torch.matmul(A, B))

BLOCK_K = 64
BLOCK_J = 256

triu_mm_src = f"""
#include <torch/extension.h>
#include <algorithm>

#define BLOCK_K {BLOCK_K}
#define BLOCK_J {BLOCK_J}

// C = triu(A @ B) for A: [M, K], B: [K, N].  Only entries with j >= i are
// computed (each one over the full K range); the strictly lower part is zero.
torch::Tensor triu_matmul(torch::Tensor A, torch::Tensor B) {{
    TORCH_CHECK(A.dim() == 2 && B.dim() == 2, "triu_matmul: 2-D inputs expected");
    TORCH_CHECK(A.size(1) == B.size(0), "triu_matmul: inner dimensions differ");
    TORCH_CHECK(A.scalar_type() == torch::kFloat32 && B.scalar_type() == torch::kFloat32,
                "triu_matmul: float32 expected");
    auto a = A.contiguous();
    auto b = B.contiguous();
    const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
    auto C = torch::zeros({{M, N}}, a.options());
    const float* ap = a.data_ptr<float>();
    const float* bp = b.data_ptr<float>();
    float* cp = C.data_ptr<float>();

    #pragma omp parallel for schedule(dynamic, 4)
    for (int64_t i = 0; i < M; ++i) {{
        const int64_t jstart = i;            // upper triangle incl. diagonal
        if (jstart >= N) continue;
        float* crow = cp + i * N;
        const float* arow = ap + i * K;
        for (int64_t j0 = jstart; j0 < N; j0 += BLOCK_J) {{
            const int64_t j1 = std::min<int64_t>(N, j0 + BLOCK_J);
            for (int64_t k0 = 0; k0 < K; k0 += BLOCK_K) {{
                const int64_t k1 = std::min<int64_t>(K, k0 + BLOCK_K);
                for (int64_t k = k0; k < k1; ++k) {{
                    const float aik = arow[k];
                    const float* brow = bp + k * N;
                    #pragma omp simd
                    for (int64_t j = j0; j < j1; ++j) crow[j] += aik * brow[j];
                }}
            }}
        }}
    }}
    return C;
}}
"""

triu_ext = load_inline(
    name="kb_l1_014_upper_triangular_matmul__inherit_template",
    cpp_sources=triu_mm_src,
    cuda_sources="",
    functions=["triu_matmul"],
    extra_cflags=["-O3", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    verbose=False,
)


class ModelNew(Model):
    """Same constructor as the reference; forward replaced by the C++ triu-matmul."""

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return triu_ext.triu_matmul(A, B)
