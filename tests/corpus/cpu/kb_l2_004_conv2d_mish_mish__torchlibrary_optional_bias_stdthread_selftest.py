# corpus: problem=kb_l2_004_conv2d_mish_mish device=cpu expect=accepted policy=both
# style: TORCH_LIBRARY/TORCH_LIBRARY_IMPL op with a Tensor? bias (is_python_module=False) called through torch.ops, nn.Conv2d kept for its parameters, direct convolution with both Mish fused, std::thread pool with -lpthread, __main__ self-test (blind round 13)
# class: 2, 7
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Fused direct convolution (valid padding, stride 1) + Mish + Mish, registered as a torch op.
conv_mish_source = r"""
#include <torch/extension.h>
#include <torch/library.h>
#include <c10/util/Optional.h>
#include <algorithm>
#include <cmath>
#include <thread>
#include <vector>

namespace {

inline float mish(float v) {
    // same formula as ATen's CPU mish: x * tanh(softplus(x))
    return v * std::tanh(std::log1p(std::exp(v)));
}

void conv_plane_range(const float* x, const float* w, const float* b,
                      float* y, int64_t begin, int64_t end,
                      int64_t Cin, int64_t H, int64_t W,
                      int64_t Cout, int64_t K, int64_t OH, int64_t OW) {
    for (int64_t job = begin; job < end; ++job) {
        const int64_t n = job / Cout;
        const int64_t oc = job % Cout;
        float* yp = y + job * OH * OW;
        const float bias = b ? b[oc] : 0.0f;
        std::fill(yp, yp + OH * OW, bias);
        const float* xn = x + n * Cin * H * W;
        const float* wo = w + oc * Cin * K * K;
        for (int64_t ic = 0; ic < Cin; ++ic) {
            const float* xc = xn + ic * H * W;
            const float* wc = wo + ic * K * K;
            for (int64_t kh = 0; kh < K; ++kh) {
                for (int64_t kw = 0; kw < K; ++kw) {
                    const float wv = wc[kh * K + kw];
                    for (int64_t oh = 0; oh < OH; ++oh) {
                        const float* xr = xc + (oh + kh) * W + kw;
                        float* yr = yp + oh * OW;
                        for (int64_t ow = 0; ow < OW; ++ow) {
                            yr[ow] += wv * xr[ow];
                        }
                    }
                }
            }
        }
        for (int64_t i = 0; i < OH * OW; ++i) {
            yp[i] = mish(mish(yp[i]));
        }
    }
}

at::Tensor conv2d_mish_mish(const at::Tensor& input, const at::Tensor& weight,
                            const c10::optional<at::Tensor>& bias) {
    TORCH_CHECK(input.dim() == 4 && weight.dim() == 4, "expected 4D input and weight");
    TORCH_CHECK(input.scalar_type() == at::kFloat && weight.scalar_type() == at::kFloat,
                "float32 only");
    TORCH_CHECK(weight.size(2) == weight.size(3), "square kernels only");
    TORCH_CHECK(input.size(1) == weight.size(1), "channel mismatch");

    auto x = input.contiguous();
    auto w = weight.contiguous();
    at::Tensor b;
    if (bias.has_value() && bias->defined()) {
        b = bias->contiguous();
        TORCH_CHECK(b.numel() == w.size(0), "bias size mismatch");
    }

    const int64_t N = x.size(0), Cin = x.size(1), H = x.size(2), W = x.size(3);
    const int64_t Cout = w.size(0), K = w.size(2);
    const int64_t OH = H - K + 1, OW = W - K + 1;
    TORCH_CHECK(OH > 0 && OW > 0, "input smaller than kernel");

    auto y = at::empty({N, Cout, OH, OW}, x.options());
    const float* xp = x.data_ptr<float>();
    const float* wp = w.data_ptr<float>();
    const float* bp = b.defined() ? b.data_ptr<float>() : nullptr;
    float* yp = y.data_ptr<float>();

    const int64_t jobs = N * Cout;
    int64_t nthreads = std::max<int64_t>(1, std::thread::hardware_concurrency());
    nthreads = std::min(nthreads, jobs);
    const int64_t chunk = (jobs + nthreads - 1) / nthreads;

    std::vector<std::thread> pool;
    pool.reserve(nthreads);
    for (int64_t t = 0; t < nthreads; ++t) {
        const int64_t begin = t * chunk;
        const int64_t end = std::min(jobs, begin + chunk);
        if (begin >= end) break;
        pool.emplace_back(conv_plane_range, xp, wp, bp, yp, begin, end,
                          Cin, H, W, Cout, K, OH, OW);
    }
    for (auto& th : pool) th.join();
    return y;
}

}  // namespace

TORCH_LIBRARY(kb_convmish, m) {
    m.def("conv2d_mish_mish(Tensor input, Tensor weight, Tensor? bias) -> Tensor");
}

TORCH_LIBRARY_IMPL(kb_convmish, CPU, m) {
    m.impl("conv2d_mish_mish", &conv2d_mish_mish);
}
"""

load_inline(
    name="kb_l2_004_conv2d_mish_mish__torchlibrary_optional_bias_stdthread_selftest",
    cpp_sources=conv_mish_source,
    extra_cflags=["-O3", "-march=native", "-std=c++17"],
    extra_ldflags=["-lpthread"],
    is_python_module=False,
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super(ModelNew, self).__init__()
        # same module as the reference so the seeded init matches
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        return torch.ops.kb_convmish.conv2d_mish_mish(x, self.conv.weight, self.conv.bias)


if __name__ == "__main__":
    torch.manual_seed(0)
    m = ModelNew(3, 5, 3)
    x = torch.rand(2, 3, 17, 19)
    ref = torch.nn.functional.mish(torch.nn.functional.mish(m.conv(x)))
    out = m(x)
    print("max abs diff:", (out - ref).abs().max().item())
