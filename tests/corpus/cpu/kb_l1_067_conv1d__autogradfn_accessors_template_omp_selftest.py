# corpus: problem=kb_l1_067_conv1d device=cpu expect=accepted policy=both
# style: torch.autograd.Function (backward raises) around the extension, nn.Conv1d kept for its parameters and read for stride/padding/dilation/groups, torch.empty(0) for a missing bias, AT_DISPATCH_FLOATING_TYPES template over TensorAccessors, OpenMP collapse(2) with -fopenmp, __main__ self-test (blind round 13)
# class: 2, 7
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Problem constants (repeated from the reference for the self-test below)
batch_size = 32
in_channels = 64
out_channels = 128
kernel_size = 3
length = 131072

conv1d_cpp = r"""
#include <torch/extension.h>
#include <algorithm>
#include <vector>

template <typename scalar_t>
static void conv1d_forward_impl(const torch::TensorAccessor<scalar_t, 3> x,
                                const torch::TensorAccessor<scalar_t, 3> w,
                                const scalar_t* bias,
                                torch::TensorAccessor<scalar_t, 3> y,
                                int64_t stride, int64_t padding, int64_t dilation, int64_t groups) {
    const int64_t B = x.size(0);
    const int64_t L_in = x.size(2);
    const int64_t C_out = w.size(0);
    const int64_t cin_per_group = w.size(1);
    const int64_t K = w.size(2);
    const int64_t L_out = y.size(2);
    const int64_t cout_per_group = C_out / groups;

    #pragma omp parallel for collapse(2) schedule(static)
    for (int64_t b = 0; b < B; ++b) {
        for (int64_t oc = 0; oc < C_out; ++oc) {
            scalar_t* out_row = y[b][oc].data();
            const scalar_t init = bias ? bias[oc] : scalar_t(0);
            for (int64_t l = 0; l < L_out; ++l) out_row[l] = init;

            const int64_t g = oc / cout_per_group;
            for (int64_t icg = 0; icg < cin_per_group; ++icg) {
                const scalar_t* in_row = x[b][g * cin_per_group + icg].data();
                for (int64_t k = 0; k < K; ++k) {
                    const scalar_t wv = w[oc][icg][k];
                    const int64_t off = k * dilation - padding;
                    // valid l: 0 <= l*stride + off < L_in
                    int64_t l_lo = off >= 0 ? 0 : (-off + stride - 1) / stride;
                    int64_t l_hi = (L_in - 1 - off) >= 0 ? (L_in - 1 - off) / stride + 1 : 0;
                    l_hi = std::min(l_hi, L_out);
                    if (stride == 1) {
                        const scalar_t* src = in_row + off;
                        for (int64_t l = l_lo; l < l_hi; ++l) out_row[l] += wv * src[l];
                    } else {
                        for (int64_t l = l_lo; l < l_hi; ++l) out_row[l] += wv * in_row[l * stride + off];
                    }
                }
            }
        }
    }
}

torch::Tensor conv1d_forward(torch::Tensor input, torch::Tensor weight, torch::Tensor bias,
                             int64_t stride, int64_t padding, int64_t dilation, int64_t groups) {
    TORCH_CHECK(input.dim() == 3, "conv1d_forward: input must be (N, C, L)");
    TORCH_CHECK(weight.dim() == 3, "conv1d_forward: weight must be (C_out, C_in/groups, K)");
    TORCH_CHECK(input.size(1) == weight.size(1) * groups, "conv1d_forward: channel mismatch");
    auto x = input.contiguous();
    auto w = weight.contiguous();
    const int64_t L_in = x.size(2);
    const int64_t K = w.size(2);
    const int64_t L_out = (L_in + 2 * padding - dilation * (K - 1) - 1) / stride + 1;
    TORCH_CHECK(L_out > 0, "conv1d_forward: output length would be non-positive");
    auto y = torch::empty({x.size(0), w.size(0), L_out}, x.options());
    torch::Tensor b;
    if (bias.defined() && bias.numel() > 0) b = bias.contiguous();

    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "conv1d_forward", ([&] {
        conv1d_forward_impl<scalar_t>(x.accessor<scalar_t, 3>(), w.accessor<scalar_t, 3>(),
                                      b.defined() ? b.data_ptr<scalar_t>() : nullptr,
                                      y.accessor<scalar_t, 3>(), stride, padding, dilation, groups);
    }));
    return y;
}
"""

conv1d_ext = load_inline(
    name="kb_l1_067_conv1d__autogradfn_accessors_template_omp_selftest",
    cpp_sources=conv1d_cpp,
    functions=["conv1d_forward"],
    extra_cflags=["-O3", "-march=native", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    with_cuda=False,
    verbose=False,
)


class Conv1dFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, stride, padding, dilation, groups):
        b = bias if bias is not None else torch.empty(0, dtype=x.dtype)
        return conv1d_ext.conv1d_forward(x, weight, b, stride, padding, dilation, groups)

    @staticmethod
    def backward(ctx, grad_output):
        raise NotImplementedError("Conv1dFunction is inference-only")


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1,
                 padding: int = 0, dilation: int = 1, groups: int = 1, bias: bool = False):
        super(ModelNew, self).__init__()
        # Same parameter names / init as the reference so a fixed seed gives identical weights.
        self.conv1d = nn.Conv1d(in_channels, out_channels, kernel_size, stride=stride, padding=padding,
                                dilation=dilation, groups=groups, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        c = self.conv1d
        return Conv1dFunction.apply(x, c.weight, c.bias, c.stride[0], c.padding[0], c.dilation[0], c.groups)


def get_inputs():
    x = torch.rand(batch_size, in_channels, length)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


if __name__ == "__main__":
    torch.manual_seed(0)
    m = ModelNew(in_channels, out_channels, kernel_size)
    x = torch.rand(2, in_channels, 1000)
    ref = m.conv1d(x)
    out = m(x)
    print("max abs diff:", (out - ref).abs().max().item())
    for cfg in [dict(stride=2, padding=1, dilation=2, groups=4, bias=True), dict(stride=3, padding=2)]:
        m2 = ModelNew(16, 8, 5, **cfg)
        x2 = torch.rand(3, 16, 97)
        print(cfg, (m2(x2) - m2.conv1d(x2)).abs().max().item())
