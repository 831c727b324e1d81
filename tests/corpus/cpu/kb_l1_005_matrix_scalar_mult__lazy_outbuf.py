# corpus: problem=kb_l1_005_matrix_scalar_mult device=cpu expect=accepted policy=both
# style: extension compiled lazily by a global helper; the kernel writes into a module-held buffer created in forward, returned as a clone
# class: 2,8
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_cpp_src = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>

// Writes A * s into `out` (which must already have A's shape) and returns nothing.
void scalar_mul_into(torch::Tensor A, double s, torch::Tensor out) {
    TORCH_CHECK(A.device().is_cpu(), "A must be a CPU tensor");
    TORCH_CHECK(A.scalar_type() == torch::kFloat32, "A must be float32");
    TORCH_CHECK(out.is_contiguous() && out.scalar_type() == torch::kFloat32, "out must be contiguous float32");
    TORCH_CHECK(out.numel() == A.numel(), "out has the wrong size");
    auto a = A.contiguous();
    const float* src = a.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    const float fs = static_cast<float>(s);
    const int64_t n = a.numel();
    at::parallel_for(0, n, 32768, [&](int64_t begin, int64_t end) {
        #pragma omp simd
        for (int64_t i = begin; i < end; ++i) dst[i] = src[i] * fs;
    });
}
"""

_ext = None


def _get_ext():
    # Compile on first use, not at import time.
    global _ext
    if _ext is None:
        _ext = load_inline(
            name="kb_l1_005_matrix_scalar_mult__lazy_outbuf",
            cpp_sources=_cpp_src,
            functions=["scalar_mul_into"],
            extra_cflags=["-O3"],
            verbose=False,
        )
    return _ext


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._buf = None  # reusable output buffer

    def forward(self, A: torch.Tensor, s: float) -> torch.Tensor:
        ext = _get_ext()
        if self._buf is None or self._buf.shape != A.shape:
            self._buf = torch.empty(A.shape, dtype=torch.float32)
        ext.scalar_mul_into(A, float(s), self._buf)
        # hand back a fresh tensor so callers never alias the workspace
        return self._buf.clone()
