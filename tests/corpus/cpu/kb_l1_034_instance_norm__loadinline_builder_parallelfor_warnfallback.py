# corpus: problem=kb_l1_034_instance_norm device=cpu expect=accepted policy=both
# style: load_inline in a builder function called at import, PYBIND11_MODULE, AT_DISPATCH_FLOATING_TYPES template, at::parallel_for over (n, c) planes, two-pass statistics in double, annotated attributes, a shape-guarded F.instance_norm fallback with warnings.warn that the problem's inputs never take (blind round 13)
# class: 2, 7
"""InstanceNorm2d (affine=False, no running stats) as a C++ CPU extension.

VARIANT: same C++ source, built with load_inline instead of files in a temp dir.
"""
import warnings
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

_INSTANCE_NORM_CPP = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <cmath>
#include <vector>

namespace {

// One (n, c) plane per task: two-pass mean / variance in double, then normalize.
template <typename scalar_t>
void instance_norm_plane(const scalar_t* __restrict__ src,
                         scalar_t* __restrict__ dst,
                         int64_t hw, double eps) {
    double sum = 0.0;
    for (int64_t i = 0; i < hw; ++i) sum += static_cast<double>(src[i]);
    const double mean = sum / static_cast<double>(hw);

    double sq = 0.0;
    for (int64_t i = 0; i < hw; ++i) {
        const double d = static_cast<double>(src[i]) - mean;
        sq += d * d;
    }
    const double var = sq / static_cast<double>(hw);   // biased, like PyTorch
    const scalar_t inv_std = static_cast<scalar_t>(1.0 / std::sqrt(var + eps));
    const scalar_t m = static_cast<scalar_t>(mean);
    for (int64_t i = 0; i < hw; ++i) dst[i] = (src[i] - m) * inv_std;
}

}  // namespace

torch::Tensor instance_norm_forward(torch::Tensor input, double eps) {
    TORCH_CHECK(input.device().is_cpu(), "instance_norm_forward: expected a CPU tensor");
    TORCH_CHECK(input.dim() == 4, "instance_norm_forward: expected NCHW input, got ", input.dim(), "-D");
    auto x = input.contiguous();
    auto out = torch::empty_like(x);

    const int64_t planes = x.size(0) * x.size(1);
    const int64_t hw = x.size(2) * x.size(3);

    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "instance_norm_forward", [&] {
        const scalar_t* xp = x.data_ptr<scalar_t>();
        scalar_t* yp = out.data_ptr<scalar_t>();
        at::parallel_for(0, planes, /*grain_size=*/1, [&](int64_t begin, int64_t end) {
            for (int64_t p = begin; p < end; ++p) {
                instance_norm_plane<scalar_t>(xp + p * hw, yp + p * hw, hw, eps);
            }
        });
    });
    return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("instance_norm_forward", &instance_norm_forward, "InstanceNorm2d forward (CPU)");
}
"""


def _build_extension():
    return load_inline(
        name="kb_l1_034_instance_norm__loadinline_builder_parallelfor_warnfallback",
        cpp_sources=_INSTANCE_NORM_CPP,
        extra_cflags=["-O3"],
        verbose=False,
    )


_ext = _build_extension()


class ModelNew(nn.Module):
    """Instance Normalization with a custom C++ kernel."""

    def __init__(self, num_features: int) -> None:
        super().__init__()
        self.num_features: int = num_features
        self.eps: float = 1e-5

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() != 4 or x.size(1) != self.num_features:
            warnings.warn(
                f"ModelNew: unsupported input shape {tuple(x.shape)}; falling back to F.instance_norm"
            )
            return F.instance_norm(x, eps=self.eps)
        return _ext.instance_norm_forward(x, self.eps)


batch_size = 112
features = 64
dim1 = 512
dim2 = 512


def get_inputs():
    x = torch.rand(batch_size, features, dim1, dim2)
    return [x]


def get_init_inputs():
    return [features]
