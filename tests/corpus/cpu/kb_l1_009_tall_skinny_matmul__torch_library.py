# corpus: problem=kb_l1_009_tall_skinny_matmul device=cpu expect=accepted policy=both
# style: TORCH_LIBRARY/TORCH_LIBRARY_IMPL op built with is_python_module=False, called as torch.ops.<ns>.mm
# class: 2
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Registered as a real dispatcher op (torch.ops.tallskinny_c.mm) instead of a pybind module.
cpp_src = r"""
#include <torch/extension.h>
#include <torch/library.h>
#include <ATen/Parallel.h>

at::Tensor tall_skinny_mm(const at::Tensor& A, const at::Tensor& B) {
    TORCH_CHECK(A.dim() == 2 && B.dim() == 2, "expected 2D inputs");
    TORCH_CHECK(A.size(1) == B.size(0), "shape mismatch");
    TORCH_CHECK(A.scalar_type() == at::kFloat && B.scalar_type() == at::kFloat, "float32 only");
    at::Tensor a_c = A.contiguous();
    at::Tensor b_c = B.contiguous();
    const int64_t M = a_c.size(0), K = a_c.size(1), N = b_c.size(1);
    at::Tensor C = at::empty({M, N}, A.options());
    const float* a = a_c.data_ptr<float>();
    const float* b = b_c.data_ptr<float>();
    float* c = C.data_ptr<float>();
    // K is tiny: each output row is a short sum of scaled rows of B.
    at::parallel_for(0, M, 16, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
            float* crow = c + i * N;
            const float* arow = a + i * K;
            for (int64_t j = 0; j < N; ++j) crow[j] = 0.f;
            for (int64_t k = 0; k < K; ++k) {
                const float av = arow[k];
                const float* brow = b + k * N;
                for (int64_t j = 0; j < N; ++j) crow[j] += av * brow[j];
            }
        }
    });
    return C;
}

TORCH_LIBRARY(tallskinny_c, m) {
    m.def("mm(Tensor A, Tensor B) -> Tensor");
}

TORCH_LIBRARY_IMPL(tallskinny_c, CPU, m) {
    m.impl("mm", &tall_skinny_mm);
}
"""

load_inline(
    name="kb_l1_009_tall_skinny_matmul__torch_library",
    cpp_sources=cpp_src,
    extra_cflags=["-O3"],
    is_python_module=False,
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.ops.tallskinny_c.mm(A, B)
