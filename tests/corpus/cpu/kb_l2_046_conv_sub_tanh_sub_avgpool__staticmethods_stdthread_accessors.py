# corpus: problem=kb_l2_046_conv_sub_tanh_sub_avgpool device=cpu expect=accepted policy=both
# style: a helper class of @staticmethods called through the class, std::thread pool template, accessors, conv into an out-parameter then a fused epilogue (blind round 11; kernel-output-unused static_reject before static methods were followed)
# class: 2
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Two kernels:
#   conv2d_valid_out(x, w, b, out)                  -- direct conv (stride 1, no padding) into `out`
#   sub_tanh_sub_avgpool(y, s1, s2, pool_k)         -- (tanh(y - s1) - s2) then AvgPool2d(pool_k)

conv_chain_source = r"""
#include <torch/extension.h>
#include <thread>
#include <vector>
#include <algorithm>
#include <cmath>

namespace {

template <typename F>
void run_threads(int64_t total, F&& fn) {
    unsigned hw = std::thread::hardware_concurrency();
    int64_t nthreads = std::max<int64_t>(1, std::min<int64_t>(hw == 0 ? 1 : hw, total));
    std::vector<std::thread> pool;
    pool.reserve(nthreads);
    const int64_t chunk = (total + nthreads - 1) / nthreads;
    for (int64_t t = 0; t < nthreads; ++t) {
        const int64_t begin = t * chunk;
        const int64_t end = std::min(total, begin + chunk);
        if (begin >= end) break;
        pool.emplace_back([=, &fn]() { fn(begin, end); });
    }
    for (auto& th : pool) th.join();
}

template <typename scalar_t>
void conv2d_valid_kernel(const at::TensorAccessor<scalar_t, 4>& x,
                         const at::TensorAccessor<scalar_t, 4>& w,
                         const at::TensorAccessor<scalar_t, 1>& b,
                         at::TensorAccessor<scalar_t, 4> y,
                         int64_t n, int64_t oc) {
    const int64_t C_in = x.size(1);
    const int64_t KH = w.size(2), KW = w.size(3);
    const int64_t OH = y.size(2), OW = y.size(3);
    auto plane = y[n][oc];
    for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) plane[oh][ow] = b[oc];
    for (int64_t ic = 0; ic < C_in; ++ic) {
        auto xin = x[n][ic];
        auto wk = w[oc][ic];
        for (int64_t kh = 0; kh < KH; ++kh) {
            for (int64_t kw = 0; kw < KW; ++kw) {
                const scalar_t wv = wk[kh][kw];
                for (int64_t oh = 0; oh < OH; ++oh) {
                    scalar_t* dst = plane[oh].data();
                    const scalar_t* src = xin[oh + kh].data() + kw;
                    for (int64_t ow = 0; ow < OW; ++ow) dst[ow] += wv * src[ow];
                }
            }
        }
    }
}

template <typename scalar_t>
void sub_tanh_sub_avgpool_kernel(const at::TensorAccessor<scalar_t, 4>& y,
                                 at::TensorAccessor<scalar_t, 4> out,
                                 int64_t plane, scalar_t s1, scalar_t s2, int64_t k) {
    const int64_t C = y.size(1);
    const int64_t n = plane / C, c = plane % C;
    const int64_t PH = out.size(2), PW = out.size(3);
    const scalar_t inv = scalar_t(1) / scalar_t(k * k);
    auto src = y[n][c];
    auto dst = out[n][c];
    for (int64_t ph = 0; ph < PH; ++ph) {
        for (int64_t pw = 0; pw < PW; ++pw) {
            scalar_t acc = 0;
            for (int64_t i = 0; i < k; ++i)
                for (int64_t j = 0; j < k; ++j)
                    acc += std::tanh(src[ph * k + i][pw * k + j] - s1) - s2;
            dst[ph][pw] = acc * inv;
        }
    }
}

}  // namespace

void conv2d_valid_out(torch::Tensor x, torch::Tensor w, torch::Tensor b, torch::Tensor out) {
    TORCH_CHECK(x.dim() == 4 && w.dim() == 4 && out.dim() == 4, "conv2d_valid_out: 4D tensors expected");
    TORCH_CHECK(x.size(1) == w.size(1), "conv2d_valid_out: channel mismatch");
    TORCH_CHECK(out.size(2) == x.size(2) - w.size(2) + 1 && out.size(3) == x.size(3) - w.size(3) + 1,
                "conv2d_valid_out: bad output size");
    TORCH_CHECK(out.is_contiguous(), "conv2d_valid_out: out must be contiguous");
    const int64_t N = x.size(0), OC = w.size(0);
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "conv2d_valid_out", [&] {
        auto xa = x.accessor<scalar_t, 4>();
        auto wa = w.accessor<scalar_t, 4>();
        auto ba = b.accessor<scalar_t, 1>();
        auto ya = out.accessor<scalar_t, 4>();
        run_threads(N * OC, [&](int64_t p0, int64_t p1) {
            for (int64_t p = p0; p < p1; ++p)
                conv2d_valid_kernel<scalar_t>(xa, wa, ba, ya, p / OC, p % OC);
        });
    });
}

torch::Tensor sub_tanh_sub_avgpool(torch::Tensor y, double s1, double s2, int64_t k) {
    TORCH_CHECK(y.dim() == 4 && k > 0, "sub_tanh_sub_avgpool: 4D input, k > 0");
    const int64_t N = y.size(0), C = y.size(1);
    const int64_t PH = y.size(2) / k, PW = y.size(3) / k;
    auto out = torch::empty({N, C, PH, PW}, y.options());
    AT_DISPATCH_FLOATING_TYPES(y.scalar_type(), "sub_tanh_sub_avgpool", [&] {
        auto ya = y.accessor<scalar_t, 4>();
        auto oa = out.accessor<scalar_t, 4>();
        const scalar_t a = static_cast<scalar_t>(s1), bb = static_cast<scalar_t>(s2);
        run_threads(N * C, [&](int64_t p0, int64_t p1) {
            for (int64_t p = p0; p < p1; ++p)
                sub_tanh_sub_avgpool_kernel<scalar_t>(ya, oa, p, a, bb, k);
        });
    });
    return out;
}
"""

conv_chain = load_inline(
    name="kb_conv_sub_tanh_sub_pool_ext",
    cpp_sources=conv_chain_source,
    functions=["conv2d_valid_out", "sub_tanh_sub_avgpool"],
    extra_cflags=["-O3", "-march=native", "-pthread"],
    extra_ldflags=["-pthread"],
    verbose=False,
)


class _Kernels:
    """Thin Python-side helpers around the C++ extension."""

    @staticmethod
    def conv2d(x, weight, bias):
        B, C, H, W = x.shape
        OC, _, KH, KW = weight.shape
        out = torch.empty((B, OC, H - KH + 1, W - KW + 1), dtype=x.dtype, device=x.device)
        conv_chain.conv2d_valid_out(x.contiguous(), weight.contiguous(), bias.contiguous(), out)
        return out

    @staticmethod
    def epilogue(y, s1, s2, pool_k):
        return conv_chain.sub_tanh_sub_avgpool(y, float(s1), float(s2), int(pool_k))


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, subtract1_value, subtract2_value,
                 kernel_size_pool):
        super(ModelNew, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.subtract1_value = subtract1_value
        self.subtract2_value = subtract2_value
        self.kernel_size_pool = kernel_size_pool

    def forward(self, x):
        y = _Kernels.conv2d(x, self.conv.weight, self.conv.bias)
        return _Kernels.epilogue(y, self.subtract1_value, self.subtract2_value, self.kernel_size_pool)


if __name__ == "__main__":
    torch.manual_seed(0)
    m = ModelNew(3, 5, 3, 0.5, 0.2, 2)
    x = torch.rand(2, 3, 17, 20)
    with torch.no_grad():
        ref = nn.AvgPool2d(2)(torch.tanh(m.conv(x) - 0.5) - 0.2)
        got = m(x)
    print(ref.shape, got.shape, (ref - got).abs().max().item())
