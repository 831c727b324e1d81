# corpus: problem=kb_l1_044_avgpool1d device=cpu expect=accepted policy=both
# style: output written into a workspace with rows padded to a multiple of 16 and returned as ws.narrow(2, 0, L_out), TORCH_LIBRARY + TORCH_LIBRARY_IMPL op built with is_python_module=False, self._op = torch.ops.<ns>.forward alias, OpenMP parallel for over rows, count_include_pad handled in C++ (blind round 15)
# class: 1, 2, 7, 8
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# AvgPool1d (count_include_pad=True, ceil_mode=False), custom C++ op registered through
# TORCH_LIBRARY and called as torch.ops.kb_avgpool1d.forward.
# The output rows are written into a workspace whose row length is rounded up to a
# multiple of 16 floats (so every row starts 64-byte aligned); the op returns the
# narrow()ed view of the first L_out columns.

batch_size = 64
in_channels = 128
input_length = 65536
kernel_size = 8
stride = 1
padding = 4

cpp_source = r"""
#include <torch/extension.h>
#include <torch/library.h>
#include <algorithm>

namespace kb_avgpool1d {

static void pool_row(const float* __restrict__ x, float* __restrict__ y,
                     int64_t L, int64_t L_out, int64_t k, int64_t s, int64_t p) {
    const float inv_k = 1.0f / static_cast<float>(k);
    // window [o*s - p, o*s - p + k) clipped to [0, L)
    for (int64_t o = 0; o < L_out; ++o) {
        const int64_t start = o * s - p;
        const int64_t lo = std::max<int64_t>(start, 0);
        const int64_t hi = std::min<int64_t>(start + k, L);
        float acc = 0.f;
        for (int64_t j = lo; j < hi; ++j) acc += x[j];
        y[o] = acc * inv_k;   // padded zeros count toward the divisor
    }
}

at::Tensor forward(const at::Tensor& input, int64_t kernel_size, int64_t stride, int64_t padding) {
    TORCH_CHECK(input.dim() == 3, "avg_pool1d: expected (N, C, L) input");
    TORCH_CHECK(input.scalar_type() == at::kFloat, "avg_pool1d: float32 only");
    TORCH_CHECK(kernel_size > 0 && stride > 0 && padding >= 0, "avg_pool1d: bad parameters");
    TORCH_CHECK(2 * padding <= kernel_size, "avg_pool1d: pad should be at most half of kernel size");

    at::Tensor x = input.contiguous();
    const int64_t NB = x.size(0), C = x.size(1), L = x.size(2);
    const int64_t L_out = (L + 2 * padding - kernel_size) / stride + 1;
    TORCH_CHECK(L_out > 0, "avg_pool1d: output would be empty");
    const int64_t L_pad = (L_out + 15) / 16 * 16;

    at::Tensor ws = at::empty({NB, C, L_pad}, x.options());
    const float* xp = x.data_ptr<float>();
    float* wp = ws.data_ptr<float>();
    const int64_t rows = NB * C;

    #pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; ++r)
        pool_row(xp + r * L, wp + r * L_pad, L, L_out, kernel_size, stride, padding);

    return ws.narrow(2, 0, L_out);
}

}  // namespace kb_avgpool1d

TORCH_LIBRARY(kb_avgpool1d, m) {
    m.def("forward(Tensor x, int kernel_size, int stride, int padding) -> Tensor");
}

TORCH_LIBRARY_IMPL(kb_avgpool1d, CPU, m) {
    m.impl("forward", &kb_avgpool1d::forward);
}
"""

load_inline(
    name="kb_l1_044_avgpool1d_ws",
    cpp_sources=cpp_source,
    is_python_module=False,
    extra_cflags=["-O3", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, kernel_size: int, stride: int = 1, padding: int = 0):
        super(ModelNew, self).__init__()
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self._op = torch.ops.kb_avgpool1d.forward

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._op(x, self.kernel_size, self.stride, self.padding)


def get_inputs():
    x = torch.rand(batch_size, in_channels, input_length)
    return [x]


def get_init_inputs():
    return [kernel_size, stride, padding]
