# corpus: problem=kb_l1_019_relu device=cpu expect=accepted policy=both
# style: functools.lru_cache getter, void out-kernel, AVX2 with a scalar tail
# class: 1, 7
import functools

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_relu_cpp = r"""
#include <torch/extension.h>
#include <immintrin.h>

// Writes relu(x) into a caller-allocated `out`; returns nothing.
void relu_out(torch::Tensor x, torch::Tensor out) {
    TORCH_CHECK(x.device().is_cpu() && out.device().is_cpu(), "relu_out: CPU tensors expected");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "relu_out: x must be float32");
    TORCH_CHECK(out.scalar_type() == torch::kFloat32, "relu_out: out must be float32");
    TORCH_CHECK(x.is_contiguous() && out.is_contiguous(), "relu_out: contiguous tensors expected");
    TORCH_CHECK(x.numel() == out.numel(), "relu_out: size mismatch");

    const float* __restrict__ src = x.data_ptr<float>();
    float* __restrict__ dst = out.data_ptr<float>();
    const int64_t n = x.numel();

    const __m256 zero = _mm256_setzero_ps();
    int64_t i = 0;
    // 4x unrolled AVX2 main loop (32 floats per iteration)
    for (; i + 32 <= n; i += 32) {
        __m256 a = _mm256_loadu_ps(src + i);
        __m256 b = _mm256_loadu_ps(src + i + 8);
        __m256 c = _mm256_loadu_ps(src + i + 16);
        __m256 d = _mm256_loadu_ps(src + i + 24);
        // max_ps returns the 2nd operand when either is NaN -> NaN propagates like torch.relu
        _mm256_storeu_ps(dst + i,      _mm256_max_ps(zero, a));
        _mm256_storeu_ps(dst + i + 8,  _mm256_max_ps(zero, b));
        _mm256_storeu_ps(dst + i + 16, _mm256_max_ps(zero, c));
        _mm256_storeu_ps(dst + i + 24, _mm256_max_ps(zero, d));
    }
    for (; i + 8 <= n; i += 8) {
        _mm256_storeu_ps(dst + i, _mm256_max_ps(zero, _mm256_loadu_ps(src + i)));
    }
    // scalar tail
    for (; i < n; ++i) {
        const float v = src[i];
        dst[i] = (v < 0.0f) ? 0.0f : v;
    }
}
"""


@functools.lru_cache(maxsize=None)
def _get_relu_ext():
    return load_inline(
        name="kb_l1_019_relu__avx2_out_lru",
        cpp_sources=_relu_cpp,
        functions=["relu_out"],
        extra_cflags=["-O3", "-mavx2", "-mfma"],
        verbose=False,
    )


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        out = torch.empty_like(x)
        _get_relu_ext().relu_out(x, out)
        return out


batch_size = 16
dim = 1025


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
