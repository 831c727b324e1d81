# corpus: problem=kb_l1_022_tanh device=cpu expect=accepted policy=both
# style: torch.autograd.Function with a custom forward kernel
# class: 2
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_cpp_src = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <cmath>

torch::Tensor tanh_fwd(torch::Tensor x) {
    TORCH_CHECK(x.device().is_cpu(), "CPU only");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    AT_DISPATCH_FLOATING_TYPES(xc.scalar_type(), "tanh_fwd", [&] {
        const scalar_t* in = xc.data_ptr<scalar_t>();
        scalar_t* out = y.data_ptr<scalar_t>();
        at::parallel_for(0, xc.numel(), 16384, [&](int64_t b, int64_t e) {
            for (int64_t i = b; i < e; ++i) out[i] = std::tanh(in[i]);
        });
    });
    return y;
}

// d/dx tanh(x) = 1 - tanh(x)^2, expressed with the saved output
torch::Tensor tanh_bwd(torch::Tensor grad, torch::Tensor y) {
    auto g = grad.contiguous();
    auto yc = y.contiguous();
    auto gx = torch::empty_like(yc);
    AT_DISPATCH_FLOATING_TYPES(yc.scalar_type(), "tanh_bwd", [&] {
        const scalar_t* gp = g.data_ptr<scalar_t>();
        const scalar_t* yp = yc.data_ptr<scalar_t>();
        scalar_t* op = gx.data_ptr<scalar_t>();
        at::parallel_for(0, yc.numel(), 16384, [&](int64_t b, int64_t e) {
            for (int64_t i = b; i < e; ++i) op[i] = gp[i] * (scalar_t(1) - yp[i] * yp[i]);
        });
    });
    return gx;
}
"""

tanh_ext = load_inline(
    name="kb_l1_022_tanh__autograd_fn",
    cpp_sources=_cpp_src,
    functions=["tanh_fwd", "tanh_bwd"],
    extra_cflags=["-O3"],
    verbose=False,
)


class TanhFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = tanh_ext.tanh_fwd(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_out):
        (y,) = ctx.saved_tensors
        return tanh_ext.tanh_bwd(grad_out, y)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return TanhFunction.apply(x)
