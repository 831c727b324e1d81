# corpus: problem=kb_l2_040_matmul_scaling_residualadd device=cpu expect=accepted policy=both
# style: template kernel taking at::TensorAccessor arguments, AT_DISPATCH_FLOATING_TYPES, std::vector return unpacked as (out,), helper _build(), verbose=True, with_cuda=False
# class: 2
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

batch_size = 128
in_features = 64
out_features = 128
scaling_factor = 0.5

cpp_source = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <vector>

template <typename scalar_t>
void linear_scale_residual_kernel(
        const at::TensorAccessor<scalar_t, 2> x,
        const at::TensorAccessor<scalar_t, 2> w,
        const at::TensorAccessor<scalar_t, 1> b,
        at::TensorAccessor<scalar_t, 2> out,
        scalar_t factor) {
    const int64_t N = x.size(0), K = x.size(1), O = w.size(0);
    at::parallel_for(0, N, 8, [&](int64_t n0, int64_t n1) {
        for (int64_t n = n0; n < n1; ++n) {
            for (int64_t o = 0; o < O; ++o) {
                scalar_t acc = b[o];
                for (int64_t k = 0; k < K; ++k) acc += x[n][k] * w[o][k];
                // y * s + y  (the residual is the unscaled y)
                out[n][o] = acc * factor + acc;
            }
        }
    });
}

std::vector<torch::Tensor> linear_scale_residual(torch::Tensor x, torch::Tensor weight,
                                                 torch::Tensor bias, double factor) {
    TORCH_CHECK(x.dim() == 2, "x: expected 2-D");
    TORCH_CHECK(weight.dim() == 2 && weight.size(1) == x.size(1), "weight: bad shape");
    TORCH_CHECK(bias.dim() == 1 && bias.size(0) == weight.size(0), "bias: bad shape");
    auto out = torch::empty({x.size(0), weight.size(0)}, x.options());
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "linear_scale_residual", [&] {
        linear_scale_residual_kernel<scalar_t>(
            x.accessor<scalar_t, 2>(), weight.accessor<scalar_t, 2>(),
            bias.accessor<scalar_t, 1>(), out.accessor<scalar_t, 2>(),
            static_cast<scalar_t>(factor));
    });
    return {out};
}
"""


def _build():
    return load_inline(
        name="kb_l2_040_linear_scale_residual",
        cpp_sources=[cpp_source],
        functions=["linear_scale_residual"],
        extra_cflags=["-O2"],
        with_cuda=False,
        verbose=True,
    )


_module = _build()


def fused_linear_scale_residual(x, weight, bias, factor):
    (out,) = _module.linear_scale_residual(x, weight.detach(), bias.detach(), float(factor))
    return out


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scaling_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        return fused_linear_scale_residual(x, self.matmul.weight, self.matmul.bias, self.scaling_factor)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, scaling_factor]
