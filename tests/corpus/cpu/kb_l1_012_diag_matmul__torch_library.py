# corpus: problem=kb_l1_012_diag_matmul device=cpu expect=accepted policy=both
# style: TORCH_LIBRARY op scaling rows by the diagonal, called through torch.ops
# class: 2
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_cpp_src = r"""
#include <torch/extension.h>
#include <torch/library.h>

// out[i, j] = a[i] * B[i, j]  ==  diag(a) @ B, without materialising diag(a).
// Reads B through its strides, so transposed/sliced B works without a copy.
at::Tensor diag_scale_rows(const at::Tensor& a, const at::Tensor& B) {
    TORCH_CHECK(a.dim() == 1 && B.dim() == 2, "expected a 1-D vector and a 2-D matrix");
    TORCH_CHECK(a.size(0) == B.size(0), "size mismatch between diag vector and B");
    TORCH_CHECK(a.scalar_type() == at::kFloat && B.scalar_type() == at::kFloat, "float32 only");
    const int64_t n = B.size(0), m = B.size(1);
    auto out = at::empty({n, m}, B.options().memory_format(at::MemoryFormat::Contiguous));
    auto a_acc = a.accessor<float, 1>();
    const float* b = B.data_ptr<float>();
    const int64_t s0 = B.stride(0), s1 = B.stride(1);
    float* o = out.data_ptr<float>();
    #pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) {
        const float ai = a_acc[i];
        const float* brow = b + i * s0;
        float* orow = o + i * m;
        for (int64_t j = 0; j < m; ++j) orow[j] = ai * brow[j * s1];
    }
    return out;
}

TORCH_LIBRARY(kb_diag_d, m) {
    m.def("diag_scale_rows(Tensor a, Tensor B) -> Tensor");
}

TORCH_LIBRARY_IMPL(kb_diag_d, CPU, m) {
    m.impl("diag_scale_rows", &diag_scale_rows);
}
"""

# is_python_module=False: the .so is loaded into the process and registers the op with the dispatcher.
load_inline(
    name="kb_l1_012_diag_matmul__torch_library",
    cpp_sources=_cpp_src,
    extra_cflags=["-O3", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    is_python_module=False,
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.op = torch.ops.kb_diag_d.diag_scale_rows

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return self.op(A.contiguous(), B)
