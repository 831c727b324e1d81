# corpus: problem=kb_l1_012_diag_matmul device=cpu expect=accepted policy=both
# style: integer size arithmetic in host code (`A.size(0) != B.size(0)`, `rows * cols`); direct ext call
# class: 3
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

diag_cpp_source = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>

// diag(A) @ B without building the diagonal matrix: row i of B scaled by A[i].
torch::Tensor diag_matmul(torch::Tensor A, torch::Tensor B) {
    TORCH_CHECK(A.dim() == 1, "diag_matmul: A must be a vector");
    TORCH_CHECK(B.dim() == 2, "diag_matmul: B must be a matrix");
    if (A.size(0) != B.size(0)) {
        TORCH_CHECK(false, "diag_matmul: A has ", A.size(0), " entries but B has ", B.size(0), " rows");
    }
    auto a = A.contiguous();
    auto b = B.contiguous();
    const int64_t rows = b.size(0);
    const int64_t cols = b.size(1);
    const int64_t total = rows * cols;
    auto out = torch::empty({rows, cols}, b.options());
    const float* pa = a.data_ptr<float>();
    const float* pb = b.data_ptr<float>();
    float* po = out.data_ptr<float>();
    at::parallel_for(0, total, 16384, [&](int64_t begin, int64_t end) {
        for (int64_t idx = begin; idx < end; ++idx) po[idx] = pa[idx / cols] * pb[idx];
    });
    return out;
}
"""

diag_matmul = load_inline(
    name="corpus_diag_matmul_cpu",
    cpp_sources=diag_cpp_source,
    functions=["diag_matmul"],
    extra_cflags=["-O3"],
    verbose=True,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return diag_matmul.diag_matmul(A, B)
