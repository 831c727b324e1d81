# corpus: problem=kb_l1_088_mingpt_new_gelu device=cpu expect=accepted policy=both
# style: torch.library.custom_op with register_fake around the extension, a kernel returning the tensor it was given
# class: 1, 7
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

gelu_cpp_source = r"""
#include <torch/extension.h>
#include <cmath>

template <typename scalar_t>
static void new_gelu_kernel(const scalar_t* in, scalar_t* o, int64_t n) {
    const scalar_t k0 = static_cast<scalar_t>(0.7978845608028654);  // sqrt(2/pi)
    const scalar_t k1 = static_cast<scalar_t>(0.044715);
    #pragma omp parallel for simd if (n > 32768)
    for (int64_t i = 0; i < n; ++i) {
        const scalar_t v = in[i];
        const scalar_t inner = k0 * (v + k1 * v * v * v);
        o[i] = static_cast<scalar_t>(0.5) * v * (static_cast<scalar_t>(1) + std::tanh(inner));
    }
}

// Writes NewGELU(x) into `out` and hands the same tensor back.
torch::Tensor new_gelu_out(const torch::Tensor& x, torch::Tensor out) {
    TORCH_CHECK(x.device().is_cpu() && out.device().is_cpu(), "new_gelu_out: CPU tensors only");
    TORCH_CHECK(x.sizes() == out.sizes(), "new_gelu_out: shape mismatch");
    TORCH_CHECK(x.is_contiguous() && out.is_contiguous(), "new_gelu_out: contiguous tensors expected");
    TORCH_CHECK(x.scalar_type() == out.scalar_type(), "new_gelu_out: dtype mismatch");

    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "new_gelu_out", [&] {
        new_gelu_kernel<scalar_t>(x.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(), x.numel());
    });
    return out;
}
"""

_gelu_ext = load_inline(
    name="kb_l1_088_mingpt_new_gelu__custom_op",
    cpp_sources=gelu_cpp_source,
    functions=["new_gelu_out"],
    extra_cflags=["-O3", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    verbose=False,
)


@torch.library.custom_op("kb_fresh_e::new_gelu", mutates_args=())
def new_gelu(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    out = torch.empty_like(x)
    return _gelu_ext.new_gelu_out(x, out)


@new_gelu.register_fake
def _(x):
    return torch.empty_like(x)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return new_gelu(x)


batch_size = 125
dim = 125


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
