# corpus: problem=kb_l1_020_leaky_relu device=cpu expect=accepted policy=both
# style: module-level extension called in forward; TORCH_CHECKs on device and dtype, OpenMP parallel for with -fopenmp
# class: 7
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

leaky_relu_cpp_source = r"""
#include <torch/extension.h>
#include <omp.h>

torch::Tensor leaky_relu_forward(torch::Tensor x, double negative_slope) {
    TORCH_CHECK(x.device().is_cpu(), "x must be a CPU tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);

    const float* in_ptr = xc.data_ptr<float>();
    float* out_ptr = out.data_ptr<float>();
    const int64_t n = xc.numel();
    const float slope = static_cast<float>(negative_slope);

    #pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) {
        const float v = in_ptr[i];
        out_ptr[i] = v > 0.0f ? v : v * slope;
    }
    return out;
}
"""

leaky_relu_ext = load_inline(
    name="kb_l1_020_leaky_relu__omp_loop",
    cpp_sources=leaky_relu_cpp_source,
    functions=["leaky_relu_forward"],
    extra_cflags=["-O3", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    verbose=False,
)


class ModelNew(nn.Module):
    """LeakyReLU computed by a custom OpenMP C++ kernel."""

    def __init__(self, negative_slope: float = 0.01):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return leaky_relu_ext.leaky_relu_forward(x, float(self.negative_slope))
