# corpus: problem=kb_l2_017_conv2d_instancenorm_divide device=cpu expect=accepted policy=both
# style: TORCH_LIBRARY schema with Tensor(a!) out + TORCH_LIBRARY_IMPL CPU; im2col + GEMM kernel; unbind -> torch.stack; flatten(2).flatten(0, 1); empty_like; view_as
# class: 2
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

batch_size = 128
in_channels = 64
out_channels = 128
height = width = 128
kernel_size = 3
divide_by = 2.0

CPP = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <cmath>
#include <vector>

// Valid (no padding, stride 1) convolution of ONE image: x (Cin, H, W), w (Cout, Cin*K*K), b (Cout)
// -> (Cout, OH, OW). im2col into a local buffer, then a row-major GEMM.
at::Tensor conv2d_single(const at::Tensor& x_, const at::Tensor& w2d_, const at::Tensor& b_, int64_t K) {
    TORCH_CHECK(x_.dim() == 3, "conv2d_single: (Cin, H, W) expected");
    auto x = x_.contiguous(); auto w = w2d_.contiguous(); auto b = b_.contiguous();
    const int64_t Cin = x.size(0), H = x.size(1), W = x.size(2);
    const int64_t Cout = w.size(0), CKK = w.size(1);
    TORCH_CHECK(CKK == Cin * K * K, "conv2d_single: weight size mismatch");
    const int64_t OH = H - K + 1, OW = W - K + 1, P = OH * OW;
    std::vector<float> cols((size_t)(CKK * P));
    const float* px = x.data_ptr<float>();
    at::parallel_for(0, CKK, 1, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const int64_t c = r / (K * K), kh = (r / K) % K, kw = r % K;
            float* dst = cols.data() + r * P;
            for (int64_t oh = 0; oh < OH; ++oh) {
                const float* src = px + (c * H + oh + kh) * W + kw;
                for (int64_t ow = 0; ow < OW; ++ow) dst[oh * OW + ow] = src[ow];
            }
        }
    });
    auto out = at::empty({Cout, OH, OW}, x.options());
    const float* pw = w.data_ptr<float>();
    const float* pb = b.data_ptr<float>();
    float* po = out.data_ptr<float>();
    at::parallel_for(0, Cout, 1, [&](int64_t o0, int64_t o1) {
        for (int64_t o = o0; o < o1; ++o) {
            float* orow = po + o * P;
            for (int64_t p = 0; p < P; ++p) orow[p] = pb[o];
            for (int64_t r = 0; r < CKK; ++r) {
                const float wv = pw[o * CKK + r];
                const float* crow = cols.data() + r * P;
                for (int64_t p = 0; p < P; ++p) orow[p] += wv * crow[p];
            }
        }
    });
    return out;
}

// x: (rows, L) each row normalised (biased variance, eps) then divided by `divisor`; out preallocated.
at::Tensor instnorm_div_(const at::Tensor& x_, at::Tensor out, double eps, double divisor) {
    auto x = x_.contiguous();
    TORCH_CHECK(out.is_contiguous() && out.sizes() == x.sizes(), "instnorm_div_: out mismatch");
    const int64_t R = x.size(0), L = x.size(1);
    const float* px = x.data_ptr<float>();
    float* po = out.data_ptr<float>();
    at::parallel_for(0, R, 1, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const float* xr = px + r * L;
            double s = 0.0;
            for (int64_t i = 0; i < L; ++i) s += xr[i];
            const double mean = s / (double)L;
            double v = 0.0;
            for (int64_t i = 0; i < L; ++i) { double d = xr[i] - mean; v += d * d; }
            const double var = v / (double)L;
            const float scale = (float)(1.0 / (std::sqrt(var + eps) * divisor));
            const float fm = (float)mean;
            float* orow = po + r * L;
            for (int64_t i = 0; i < L; ++i) orow[i] = (xr[i] - fm) * scale;
        }
    });
    return out;
}

TORCH_LIBRARY(kb_convin, m) {
    m.def("conv2d_single(Tensor x, Tensor w2d, Tensor b, int K) -> Tensor");
    m.def("instnorm_div_(Tensor x, Tensor(a!) out, float eps, float divisor) -> Tensor(a!)");
}

TORCH_LIBRARY_IMPL(kb_convin, CPU, m) {
    m.impl("conv2d_single", &conv2d_single);
    m.impl("instnorm_div_", &instnorm_div_);
}
"""

load_inline(
    name="kb_conv_instnorm_div_lib",
    cpp_sources=CPP,
    extra_cflags=["-O3", "-march=native"],
    is_python_module=False,
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, divide_by: float):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.instance_norm = nn.InstanceNorm2d(out_channels)  # no affine, eps=1e-5 (kept for parity)
        self.divide_by = divide_by
        self.kernel_size = kernel_size

    @torch.no_grad()
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w2d = self.conv.weight.reshape(self.conv.out_channels, -1)
        y = torch.stack([torch.ops.kb_convin.conv2d_single(xi, w2d, self.conv.bias, self.kernel_size)
                         for xi in x.unbind(0)])
        rows = y.flatten(2).flatten(0, 1)  # (N*C, OH*OW)
        out = torch.empty_like(rows)
        torch.ops.kb_convin.instnorm_div_(rows, out, self.instance_norm.eps, float(self.divide_by))
        return out.view_as(y)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, divide_by]
