# corpus: problem=kb_l1_082_depthwise_conv2d device=cpu expect=accepted policy=both
# style: AT_DISPATCH_FLOATING_TYPES with .accessor<scalar_t, 4>(), depthwise loop per channel, bias optional
# class: 7
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

depthwise_source = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>

template <typename scalar_t>
void depthwise_kernel(const at::TensorAccessor<scalar_t, 4> in,
                      const at::TensorAccessor<scalar_t, 3> w,
                      const scalar_t* bias,
                      at::TensorAccessor<scalar_t, 4> out,
                      int64_t plane, int64_t stride, int64_t padding) {
    const int64_t C = in.size(1);
    const int64_t H = in.size(2), W = in.size(3);
    const int64_t K = w.size(1);
    const int64_t OH = out.size(2), OW = out.size(3);
    const int64_t n = plane / C, c = plane % C;
    auto x = in[n][c];
    auto wc = w[c];
    auto y = out[n][c];
    const scalar_t b = bias ? bias[c] : scalar_t(0);
    for (int64_t oh = 0; oh < OH; ++oh) {
        for (int64_t ow = 0; ow < OW; ++ow) {
            scalar_t acc = b;
            for (int64_t kh = 0; kh < K; ++kh) {
                const int64_t ih = oh * stride - padding + kh;
                if (ih < 0 || ih >= H) continue;
                for (int64_t kw = 0; kw < K; ++kw) {
                    const int64_t iw = ow * stride - padding + kw;
                    if (iw < 0 || iw >= W) continue;
                    acc += x[ih][iw] * wc[kh][kw];
                }
            }
            y[oh][ow] = acc;
        }
    }
}

torch::Tensor depthwise_conv2d(torch::Tensor input, torch::Tensor weight, torch::Tensor bias,
                               int64_t stride, int64_t padding) {
    TORCH_CHECK(input.dim() == 4, "expected NCHW input");
    TORCH_CHECK(weight.dim() == 4 && weight.size(1) == 1, "expected depthwise weight of shape (C,1,K,K)");
    TORCH_CHECK(weight.size(0) == input.size(1), "channel mismatch");
    TORCH_CHECK(weight.size(2) == weight.size(3), "square kernel expected");
    TORCH_CHECK(stride >= 1, "stride must be >= 1");

    auto x = input.contiguous();
    auto w = weight.contiguous().view({weight.size(0), weight.size(2), weight.size(3)});
    const bool has_bias = bias.defined() && bias.numel() > 0;
    auto b = has_bias ? bias.contiguous() : bias;

    const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
    const int64_t K = w.size(1);
    const int64_t OH = (H + 2 * padding - K) / stride + 1;
    const int64_t OW = (W + 2 * padding - K) / stride + 1;
    TORCH_CHECK(OH > 0 && OW > 0, "empty output");

    auto out = torch::empty({N, C, OH, OW}, x.options());

    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "depthwise_conv2d", [&] {
        auto in_a = x.accessor<scalar_t, 4>();
        auto w_a = w.accessor<scalar_t, 3>();
        auto out_a = out.accessor<scalar_t, 4>();
        const scalar_t* bptr = has_bias ? b.data_ptr<scalar_t>() : nullptr;
        at::parallel_for(0, N * C, 1, [&](int64_t begin, int64_t end) {
            for (int64_t p = begin; p < end; ++p) {
                depthwise_kernel<scalar_t>(in_a, w_a, bptr, out_a, p, stride, padding);
            }
        });
    });
    return out;
}
"""

depthwise_ext = load_inline(
    name="kb_l1_082_depthwise_conv2d__dispatch_accessor",
    cpp_sources=depthwise_source,
    functions=["depthwise_conv2d"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, kernel_size: int, stride: int = 1, padding: int = 0, bias: bool = False):
        super().__init__()
        self.conv2d = nn.Conv2d(in_channels, in_channels, kernel_size, stride=stride, padding=padding,
                                groups=in_channels, bias=bias)
        self.stride = stride
        self.padding = padding

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        bias = self.conv2d.bias if self.conv2d.bias is not None else torch.empty(0, dtype=x.dtype)
        return depthwise_ext.depthwise_conv2d(x, self.conv2d.weight, bias, self.stride, self.padding)
