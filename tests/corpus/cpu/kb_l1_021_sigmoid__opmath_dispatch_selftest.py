# corpus: problem=kb_l1_021_sigmoid device=cpu expect=accepted policy=both
# style: AT_DISPATCH_FLOATING_TYPES_AND2(Half, BFloat16), template + at::opmath_type, at::parallel_for, self.sigmoid = ext.fn alias, -O3 -march=native, with_cuda=False, __main__ self-test seeding torch
# class: 1
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

batch_size = 4096
dim = 393216

sigmoid_source = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <cmath>

template <typename scalar_t>
static inline scalar_t stable_sigmoid(scalar_t v) {
    using acc_t = at::opmath_type<scalar_t>;
    acc_t x = static_cast<acc_t>(v);
    if (x >= acc_t(0)) {
        return static_cast<scalar_t>(acc_t(1) / (acc_t(1) + std::exp(-x)));
    }
    acc_t e = std::exp(x);
    return static_cast<scalar_t>(e / (acc_t(1) + e));
}

template <typename scalar_t>
static void sigmoid_kernel(const scalar_t* __restrict__ in, scalar_t* __restrict__ out, int64_t n) {
    at::parallel_for(0, n, 32768, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
            out[i] = stable_sigmoid<scalar_t>(in[i]);
        }
    });
}

torch::Tensor sigmoid_forward(torch::Tensor x) {
    TORCH_CHECK(!x.is_cuda(), "sigmoid_forward: expected a CPU tensor");
    auto input = x.contiguous();
    auto output = torch::empty_like(input);
    const int64_t n = input.numel();
    AT_DISPATCH_FLOATING_TYPES_AND2(at::ScalarType::Half, at::ScalarType::BFloat16,
                                    input.scalar_type(), "sigmoid_forward", [&] {
        sigmoid_kernel<scalar_t>(input.data_ptr<scalar_t>(), output.data_ptr<scalar_t>(), n);
    });
    return output;
}
"""

sigmoid_ext = load_inline(
    name="kb_sigmoid_dispatch",
    cpp_sources=sigmoid_source,
    functions=["sigmoid_forward"],
    extra_cflags=["-O3", "-march=native"],
    with_cuda=False,
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.sigmoid = sigmoid_ext.sigmoid_forward

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.sigmoid(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(64, 1000) * 20
    y = ModelNew()(x)
    ref = torch.sigmoid(x)
    print("max abs err:", (y - ref).abs().max().item())
    assert torch.allclose(y, ref, atol=1e-6, rtol=1e-5)
    xd = x.double()
    assert torch.allclose(ModelNew()(xd), torch.sigmoid(xd))
    print("ok")
