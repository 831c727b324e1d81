# corpus: problem=kb_l1_041_maxpool1d device=cpu expect=accepted policy=both
# style: a plain class with __call__ holding functools.partial(ext.fn, kernel_size=..., with_indices=...) (int/bool keyword args), py::arg, std::vector<Tensor> return unpacked, OpenMP, self-test block (blind round 11; kernel-output-unused static_reject before plain-class __call__ was followed)
# class: 2
import functools

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_cpp_src = r"""
#include <torch/extension.h>
#include <vector>
#include <limits>
#include <cmath>
#include <omp.h>

// MaxPool1d forward (floor mode) with padding, stride and dilation.
// Padded positions behave as -inf. Returns {values, indices}; indices are only
// filled when `with_indices` is true (otherwise an empty tensor).
std::vector<torch::Tensor> maxpool1d_forward(torch::Tensor input,
                                             int64_t kernel_size,
                                             int64_t stride,
                                             int64_t padding,
                                             int64_t dilation,
                                             bool with_indices) {
    TORCH_CHECK(input.dim() == 3, "maxpool1d: expected (N, C, L) input");
    TORCH_CHECK(input.scalar_type() == torch::kFloat32, "maxpool1d: float32 only");
    TORCH_CHECK(kernel_size > 0 && stride > 0 && dilation > 0, "maxpool1d: bad params");
    TORCH_CHECK(padding <= kernel_size / 2, "maxpool1d: pad should be at most half of kernel size");
    auto x = input.contiguous();
    const int64_t N = x.size(0), C = x.size(1), L = x.size(2);
    const int64_t L_out = (L + 2 * padding - dilation * (kernel_size - 1) - 1) / stride + 1;
    TORCH_CHECK(L_out > 0, "maxpool1d: output size is too small");

    auto out = torch::empty({N, C, L_out}, x.options());
    torch::Tensor idx = with_indices ? torch::empty({N, C, L_out}, x.options().dtype(torch::kLong))
                                     : torch::empty({0}, x.options().dtype(torch::kLong));

    const float* src = x.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    int64_t* idst = with_indices ? idx.data_ptr<int64_t>() : nullptr;
    const int64_t rows = N * C;

    #pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
        const float* in_row = src + r * L;
        float* out_row = dst + r * L_out;
        int64_t* idx_row = idst ? idst + r * L_out : nullptr;
        for (int64_t o = 0; o < L_out; ++o) {
            const int64_t start = o * stride - padding;
            float best = -std::numeric_limits<float>::infinity();
            int64_t best_i = -1;
            for (int64_t k = 0; k < kernel_size; ++k) {
                const int64_t p = start + k * dilation;
                if (p < 0 || p >= L) continue;
                const float v = in_row[p];
                if (v > best || std::isnan(v) || best_i < 0) {
                    best = v;
                    best_i = p;
                    if (std::isnan(v)) break;
                }
            }
            out_row[o] = best;
            if (idx_row) idx_row[o] = best_i;
        }
    }
    return {out, idx};
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("maxpool1d_forward", &maxpool1d_forward, "MaxPool1d forward (OpenMP)",
          py::arg("input"), py::arg("kernel_size"), py::arg("stride"),
          py::arg("padding"), py::arg("dilation"), py::arg("with_indices"));
}
"""

_ext = load_inline(
    name="kb_maxpool1d_omp_ext",
    cpp_sources=_cpp_src,
    extra_cflags=["-O3", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    with_cuda=False,
    verbose=False,
)


class MaxPool1dKernel:
    """Callable wrapper around the C++ kernel with the pooling geometry bound."""

    def __init__(self, kernel_size, stride, padding, dilation, return_indices):
        self.return_indices = bool(return_indices)
        self._fn = functools.partial(
            _ext.maxpool1d_forward,
            kernel_size=int(kernel_size),
            stride=int(stride),
            padding=int(padding),
            dilation=int(dilation),
            with_indices=self.return_indices,
        )

    def __call__(self, x):
        values, indices = self._fn(x.contiguous())
        if self.return_indices:
            return values, indices
        return values


class ModelNew(nn.Module):
    def __init__(self, kernel_size: int, stride: int = None, padding: int = 0,
                 dilation: int = 1, return_indices: bool = False):
        super(ModelNew, self).__init__()
        stride = kernel_size if stride is None else stride
        self.pool = MaxPool1dKernel(kernel_size, stride, padding, dilation, return_indices)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.rand(3, 5, 1000)
    for ks, st, pd, dl in [(8, 1, 4, 3), (3, 2, 1, 1), (4, None, 0, 2)]:
        ref = nn.MaxPool1d(ks, st, pd, dl, return_indices=True)(x)
        got = ModelNew(ks, st, pd, dl, True)(x)
        print(ks, st, pd, dl, torch.equal(ref[0], got[0]), torch.equal(ref[1], got[1]))
