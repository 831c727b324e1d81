# corpus: problem=kb_l2_040_matmul_scaling_residualadd device=cpu expect=accepted policy=kernelbench
# style: PyTorch's nn.Linear kept; the custom epilogue scales and adds the residual in place on the linear's output
# class: 8
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_cpp_src = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>

// In place: y <- y * s + y   (the residual is the unscaled y itself)
void scale_residual_(torch::Tensor y, double s) {
    TORCH_CHECK(y.is_contiguous(), "y must be contiguous");
    AT_DISPATCH_FLOATING_TYPES(y.scalar_type(), "scale_residual_", [&] {
        scalar_t* p = y.data_ptr<scalar_t>();
        const scalar_t f = static_cast<scalar_t>(s);
        at::parallel_for(0, y.numel(), 4096, [&](int64_t b, int64_t e) {
            for (int64_t i = b; i < e; ++i) { scalar_t v = p[i]; p[i] = v * f + v; }
        });
    });
}
"""

_epilogue = load_inline(
    name="kb_l2_040_matmul_scaling_residualadd__inplace_epilogue",
    cpp_sources=_cpp_src,
    functions=["scale_residual_"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scaling_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        # GEMM stays in PyTorch (nn.Linear); the scale + residual epilogue is fused and done in place
        y = self.matmul(x).contiguous()
        _epilogue.scale_residual_(y, float(self.scaling_factor))
        return y
