# corpus: problem=kb_l1_004_matrix_vector_mult device=cpu expect=accepted policy=both
# style: TORCH_LIBRARY + TORCH_LIBRARY_IMPL called as torch.ops.<ns>.<op>, is_python_module=False, #pragma omp parallel for / omp simd with -fopenmp, @torch.no_grad() forward
# class: 2
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

M = 256 * 8
K = 131072 * 8

_cpp_src = r"""
#include <torch/extension.h>
#include <omp.h>

// y[m] = sum_k A[m,k] * x[k]; one row per iteration, 8-way unrolled accumulators.
torch::Tensor matvec_cpu(const torch::Tensor& A, const torch::Tensor& B) {
    TORCH_CHECK(A.device().is_cpu() && B.device().is_cpu(), "matvec: CPU tensors expected");
    TORCH_CHECK(A.dim() == 2, "matvec: A must be 2-D");
    TORCH_CHECK(B.dim() == 2 && B.size(1) == 1, "matvec: B must be (K, 1)");
    TORCH_CHECK(A.size(1) == B.size(0), "matvec: inner dimensions differ");
    TORCH_CHECK(A.scalar_type() == torch::kFloat && B.scalar_type() == torch::kFloat,
                "matvec: float32 only");

    auto a = A.contiguous();
    auto b = B.contiguous();
    const int64_t rows = a.size(0);
    const int64_t cols = a.size(1);
    auto out = torch::empty({rows, 1}, a.options());

    const float* __restrict__ pa = a.data_ptr<float>();
    const float* __restrict__ pb = b.data_ptr<float>();
    float* __restrict__ po = out.data_ptr<float>();

    #pragma omp parallel for schedule(static)
    for (int64_t m = 0; m < rows; ++m) {
        const float* row = pa + m * cols;
        double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        int64_t k = 0;
        for (; k + 8 <= cols; k += 8) {
            #pragma omp simd
            for (int u = 0; u < 8; ++u) acc[u] += (double)row[k + u] * (double)pb[k + u];
        }
        double s = 0.0;
        for (; k < cols; ++k) s += (double)row[k] * (double)pb[k];
        for (int u = 0; u < 8; ++u) s += acc[u];
        po[m] = (float)s;
    }
    return out;
}

TORCH_LIBRARY(kb_matvec, m) {
    m.def("matvec(Tensor A, Tensor B) -> Tensor");
}

TORCH_LIBRARY_IMPL(kb_matvec, CPU, m) {
    m.impl("matvec", &matvec_cpu);
}
"""

# is_python_module=False: the library only registers the op with the dispatcher.
load_inline(
    name="kb_matvec_omp",
    cpp_sources=_cpp_src,
    extra_cflags=["-O3", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    is_python_module=False,
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    @torch.no_grad()
    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.ops.kb_matvec.matvec(A, B)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, 1)]


def get_init_inputs():
    return []
