# corpus: problem=kb_l1_082_depthwise_conv2d device=cpu expect=accepted policy=both
# style: PYBIND11_MODULE with an optional bias; AT_DISPATCH_FLOATING_TYPES; template; omp; register_buffer pad scratch filled by slice assignment with index arithmetic; weight.flatten(1); @torch.no_grad
# class: 8
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

batch_size = 16
in_channels = 64
kernel_size = 3
width = 512
height = 512
stride = 1
padding = 0

_source = r"""
#include <torch/extension.h>
#include <omp.h>

template <typename scalar_t>
static void dw_conv_kernel(const scalar_t* __restrict__ in, const scalar_t* __restrict__ w,
                           const scalar_t* __restrict__ bias, scalar_t* __restrict__ out,
                           int64_t N, int64_t C, int64_t H, int64_t W,
                           int64_t K, int64_t stride, int64_t OH, int64_t OW) {
    #pragma omp parallel for collapse(2) schedule(static)
    for (int64_t n = 0; n < N; ++n) {
        for (int64_t c = 0; c < C; ++c) {
            const scalar_t* src = in + (n * C + c) * H * W;
            const scalar_t* wc = w + c * K * K;
            scalar_t* dst = out + (n * C + c) * OH * OW;
            const scalar_t b = bias ? bias[c] : scalar_t(0);
            for (int64_t oh = 0; oh < OH; ++oh) {
                for (int64_t ow = 0; ow < OW; ++ow) {
                    scalar_t acc = 0;
                    const scalar_t* base = src + (oh * stride) * W + ow * stride;
                    for (int64_t kh = 0; kh < K; ++kh) {
                        const scalar_t* row = base + kh * W;
                        for (int64_t kw = 0; kw < K; ++kw) acc += row[kw] * wc[kh * K + kw];
                    }
                    dst[oh * OW + ow] = acc + b;
                }
            }
        }
    }
}

// x_padded: (N, C, H, W) already zero padded; weight2d: (C, K*K)
torch::Tensor depthwise_conv2d(torch::Tensor x_padded, torch::Tensor weight2d,
                               c10::optional<torch::Tensor> bias, int64_t kernel_size, int64_t stride) {
    TORCH_CHECK(x_padded.dim() == 4, "x must be NCHW");
    TORCH_CHECK(weight2d.dim() == 2 && weight2d.size(1) == kernel_size * kernel_size, "weight must be (C, K*K)");
    TORCH_CHECK(weight2d.size(0) == x_padded.size(1), "channel mismatch");
    auto x = x_padded.contiguous();
    auto w = weight2d.contiguous();
    const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
    const int64_t OH = (H - kernel_size) / stride + 1;
    const int64_t OW = (W - kernel_size) / stride + 1;
    auto out = torch::empty({N, C, OH, OW}, x.options());
    torch::Tensor b;
    if (bias.has_value() && bias->defined()) b = bias->contiguous();
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "depthwise_conv2d", [&] {
        dw_conv_kernel<scalar_t>(x.data_ptr<scalar_t>(), w.data_ptr<scalar_t>(),
                                 b.defined() ? b.data_ptr<scalar_t>() : nullptr,
                                 out.data_ptr<scalar_t>(), N, C, H, W, kernel_size, stride, OH, OW);
    });
    return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("depthwise_conv2d", &depthwise_conv2d, "depthwise conv2d (CPU)",
          py::arg("x_padded"), py::arg("weight2d"), py::arg("bias") = py::none(),
          py::arg("kernel_size"), py::arg("stride"));
}
"""

_dw = load_inline(
    name="kb_depthwise_conv2d_pybind_pad",
    cpp_sources=[_source],
    extra_cflags=["-O3", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, kernel_size: int, stride: int = 1, padding: int = 0, bias: bool = False):
        super().__init__()
        # same module as the reference so the seeded init matches
        self.conv2d = nn.Conv2d(in_channels, in_channels, kernel_size, stride=stride, padding=padding,
                                groups=in_channels, bias=bias)
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        # scratch for the zero-padded input, reused across calls
        self.register_buffer("pad_scratch", torch.zeros(0), persistent=False)

    def _padded(self, x):
        p = self.padding
        if p == 0:
            return x
        n, c, h, w = x.shape
        shape = (n, c, h + 2 * p, w + 2 * p)
        if tuple(self.pad_scratch.shape) != shape or self.pad_scratch.dtype != x.dtype:
            self.pad_scratch = torch.zeros(shape, dtype=x.dtype, device=x.device)
        self.pad_scratch[:, :, p:p + h, p:p + w] = x
        return self.pad_scratch

    @torch.no_grad()
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xp = self._padded(x)
        w2d = self.conv2d.weight.flatten(1)  # (C, 1, K, K) -> (C, K*K)
        return _dw.depthwise_conv2d(xp, w2d, self.conv2d.bias, self.kernel_size, self.stride)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, kernel_size, stride, padding]


if __name__ == "__main__":
    torch.manual_seed(0)
    for pad, st, bias in [(0, 1, False), (1, 1, True), (2, 2, False)]:
        ref = nn.Conv2d(8, 8, 3, stride=st, padding=pad, groups=8, bias=bias)
        m = ModelNew(8, 3, st, pad, bias)
        m.conv2d.load_state_dict(ref.state_dict())
        x = torch.randn(2, 8, 33, 31)
        print(pad, st, bias, (m(x) - ref(x)).abs().max().item())
