# corpus: problem=kb_l1_035_groupnorm device=cpu expect=accepted policy=both
# style: load_inline in a builder function, PYBIND11_MODULE with py::arg defaults (py::none() weight and bias), std::optional<at::Tensor>, OpenMP parallel for + omp simd, nn.GroupNorm kept as a submodule for its parameters, x.contiguous(memory_format=...), a dtype/dim/device-guarded F.group_norm fallback with warnings.warn that the problem's inputs never take (blind round 13)
# class: 7
import warnings
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

# Problem constants (repeated from the reference)
batch_size = 112
features = 64
num_groups = 8
dim1 = 512
dim2 = 512

_GROUP_NORM_SRC = r"""
#include <torch/extension.h>
#include <ATen/ATen.h>
#include <omp.h>
#include <cmath>
#include <optional>

// GroupNorm over (N, C, *): each (n, g) block is contiguous (C/G channels x spatial).
// Pass 1: mean / biased variance in double. Pass 2: normalize + per-channel affine.
at::Tensor group_norm_forward(const at::Tensor& input, int64_t num_groups,
                              const std::optional<at::Tensor>& weight,
                              const std::optional<at::Tensor>& bias, double eps) {
    TORCH_CHECK(input.device().is_cpu(), "group_norm_forward: expected a CPU tensor");
    TORCH_CHECK(input.scalar_type() == at::kFloat, "group_norm_forward: expected float32");
    TORCH_CHECK(input.dim() >= 2, "group_norm_forward: expected (N, C, *) input");
    const int64_t N = input.size(0);
    const int64_t C = input.size(1);
    TORCH_CHECK(C % num_groups == 0, "C must be divisible by num_groups");

    at::Tensor x = input.contiguous();
    at::Tensor w, b;
    if (weight.has_value() && weight->defined()) w = weight->contiguous();
    if (bias.has_value() && bias->defined()) b = bias->contiguous();

    const int64_t cpg = C / num_groups;
    const int64_t inner = (N * C == 0) ? 0 : x.numel() / (N * C);
    const int64_t block = cpg * inner;
    const int64_t blocks = N * num_groups;

    at::Tensor out = at::empty_like(x);
    const float* __restrict__ src = x.data_ptr<float>();
    float* __restrict__ dst = out.data_ptr<float>();
    const float* wp = w.defined() ? w.data_ptr<float>() : nullptr;
    const float* bp = b.defined() ? b.data_ptr<float>() : nullptr;

    #pragma omp parallel for schedule(static)
    for (int64_t blk = 0; blk < blocks; ++blk) {
        const float* in_p = src + blk * block;
        float* out_p = dst + blk * block;
        const int64_t g = blk % num_groups;

        double sum = 0.0, sq = 0.0;
        for (int64_t i = 0; i < block; ++i) {
            const double v = static_cast<double>(in_p[i]);
            sum += v;
            sq += v * v;
        }
        const double mean = sum / static_cast<double>(block);
        double var = sq / static_cast<double>(block) - mean * mean;
        if (var < 0.0) var = 0.0;
        const float rstd = static_cast<float>(1.0 / std::sqrt(var + eps));
        const float m = static_cast<float>(mean);

        for (int64_t cc = 0; cc < cpg; ++cc) {
            const int64_t c = g * cpg + cc;
            const float scale = (wp ? wp[c] : 1.0f) * rstd;
            const float shift = (bp ? bp[c] : 0.0f) - m * scale;
            const float* ip = in_p + cc * inner;
            float* op = out_p + cc * inner;
            #pragma omp simd
            for (int64_t i = 0; i < inner; ++i) op[i] = ip[i] * scale + shift;
        }
    }
    return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("group_norm_forward", &group_norm_forward,
          "GroupNorm forward (CPU, OpenMP)",
          py::arg("input"), py::arg("num_groups"),
          py::arg("weight") = py::none(), py::arg("bias") = py::none(),
          py::arg("eps") = 1e-5);
}
"""


def _build_extension():
    return load_inline(
        name="kb_l1_035_groupnorm__loadinline_pyarg_omp_warnfallback_submoduleparams",
        cpp_sources=_GROUP_NORM_SRC,
        extra_cflags=["-O3", "-fopenmp"],
        extra_ldflags=["-fopenmp"],
        verbose=False,
    )


_ext = _build_extension()


class ModelNew(nn.Module):
    """GroupNorm with a custom C++/OpenMP kernel; the affine parameters stay in `self.gn`."""

    def __init__(self, num_features: int, num_groups: int):
        super(ModelNew, self).__init__()
        self.gn = nn.GroupNorm(num_groups=num_groups, num_channels=num_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gn = self.gn
        weight: Optional[torch.Tensor] = gn.weight if gn.affine else None
        bias: Optional[torch.Tensor] = gn.bias if gn.affine else None
        if x.dtype != torch.float32 or x.dim() < 2 or x.is_cuda:
            warnings.warn(
                f"ModelNew: falling back to F.group_norm for dtype={x.dtype}, dim={x.dim()}"
            )
            return F.group_norm(x, gn.num_groups, weight, bias, gn.eps)
        x = x.contiguous(memory_format=torch.contiguous_format)
        return _ext.group_norm_forward(x, gn.num_groups, weight=weight, bias=bias, eps=gn.eps)
