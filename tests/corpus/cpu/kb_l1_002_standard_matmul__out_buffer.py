# corpus: problem=kb_l1_002_standard_matmul device=cpu expect=accepted policy=both
# style: output buffer kept on the module, refilled by the kernel each call and returned as a clone; hand-written PYBIND11_MODULE; OpenMP
# class: 8
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Blocked GEMM written into a caller-provided output buffer (C = A @ B).
matmul_cpp = r"""
#include <torch/extension.h>
#include <omp.h>
#include <algorithm>

void matmul_out(torch::Tensor A, torch::Tensor B, torch::Tensor C) {
    TORCH_CHECK(A.dim() == 2 && B.dim() == 2, "A and B must be 2D");
    TORCH_CHECK(A.size(1) == B.size(0), "inner dimensions must match");
    TORCH_CHECK(A.scalar_type() == torch::kFloat32 && B.scalar_type() == torch::kFloat32, "float32 only");
    TORCH_CHECK(C.is_contiguous() && C.size(0) == A.size(0) && C.size(1) == B.size(1), "bad output buffer");
    A = A.contiguous();
    B = B.contiguous();
    const int64_t M = A.size(0), K = A.size(1), N = B.size(1);
    const float* a = A.data_ptr<float>();
    const float* b = B.data_ptr<float>();
    float* c = C.data_ptr<float>();

    const int64_t BM = 32, BK = 128;
    #pragma omp parallel for schedule(static)
    for (int64_t i0 = 0; i0 < M; i0 += BM) {
        const int64_t i1 = std::min(i0 + BM, M);
        for (int64_t i = i0; i < i1; ++i) {
            float* crow = c + i * N;
            for (int64_t j = 0; j < N; ++j) crow[j] = 0.f;
        }
        for (int64_t k0 = 0; k0 < K; k0 += BK) {
            const int64_t k1 = std::min(k0 + BK, K);
            for (int64_t i = i0; i < i1; ++i) {
                float* crow = c + i * N;
                const float* arow = a + i * K;
                for (int64_t k = k0; k < k1; ++k) {
                    const float av = arow[k];
                    const float* brow = b + k * N;
                    #pragma omp simd
                    for (int64_t j = 0; j < N; ++j) crow[j] += av * brow[j];
                }
            }
        }
    }
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("matmul_out", &matmul_out, "C = A @ B written into C");
}
"""

matmul_ext = load_inline(
    name="kb_l1_002_standard_matmul__out_buffer",
    cpp_sources=matmul_cpp,
    extra_cflags=["-O3", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Output buffer reused across calls; reallocated only when the shape/dtype changes.
        self._out = None

    def _buffer(self, M, N, ref):
        if self._out is None or self._out.shape != (M, N) or self._out.dtype != ref.dtype:
            self._out = torch.empty(M, N, dtype=ref.dtype, device=ref.device)
        return self._out

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        out = self._buffer(A.size(0), B.size(1), A)
        matmul_ext.matmul_out(A, B, out)
        # hand back a fresh tensor so callers never alias the internal buffer
        return out.clone()
