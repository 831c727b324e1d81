# corpus: problem=kb_l1_033_batchnorm device=cpu expect=accepted policy=both
# style: keeps self.bn and passes its weight, bias and buffers; batch statistics in C++; running_mean, running_var and num_batches_tracked updated in place in C++; eval path; at::parallel_for
# class: 8
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

batch_size = 16
features = 64
dim1 = 256
dim2 = 256

_bn_cpp = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <cmath>
#include <algorithm>

// Sum of p[i] (or (p[i]-m)^2): 8 float lanes within 1024-element chunks, chunks summed in double.
static inline double chunked_sum(const float* __restrict__ p, int64_t n, float m, bool squared) {
    double total = 0.0;
    for (int64_t i0 = 0; i0 < n; i0 += 1024) {
        const int64_t i1 = std::min<int64_t>(n, i0 + 1024);
        float lane[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
        int64_t i = i0;
        for (; i + 8 <= i1; i += 8) {
            for (int k = 0; k < 8; ++k) {
                float v = p[i + k];
                if (squared) { v -= m; v *= v; }
                lane[k] += v;
            }
        }
        double part = 0.0;
        for (; i < i1; ++i) {
            float v = p[i];
            if (squared) { v -= m; v *= v; }
            part += v;
        }
        for (int k = 0; k < 8; ++k) part += lane[k];
        total += part;
    }
    return total;
}

// Batch norm over an NCHW tensor. In training mode the per-channel batch statistics are
// computed here and the running buffers (running_mean, running_var, num_batches_tracked)
// are updated in place, exactly like nn.BatchNorm2d does.
torch::Tensor batchnorm2d_forward(torch::Tensor x,
                                  torch::Tensor weight,
                                  torch::Tensor bias,
                                  torch::Tensor running_mean,
                                  torch::Tensor running_var,
                                  torch::Tensor num_batches_tracked,
                                  bool training,
                                  double momentum,
                                  double eps) {
    TORCH_CHECK(x.device().is_cpu(), "batchnorm2d_forward: CPU tensors only");
    TORCH_CHECK(x.dim() == 4, "batchnorm2d_forward: expected NCHW input");
    TORCH_CHECK(x.scalar_type() == torch::kFloat, "batchnorm2d_forward: float32 only");
    TORCH_CHECK(running_mean.is_contiguous() && running_var.is_contiguous(), "running buffers must be contiguous");

    auto input = x.contiguous();
    const int64_t N = input.size(0), C = input.size(1);
    const int64_t HW = input.size(2) * input.size(3);
    const int64_t count = N * HW;

    auto out = torch::empty_like(input);
    auto w = weight.contiguous();
    auto b = bias.contiguous();

    const float* xp = input.data_ptr<float>();
    float* yp = out.data_ptr<float>();
    const float* wp = w.data_ptr<float>();
    const float* bp = b.data_ptr<float>();
    float* rm = running_mean.data_ptr<float>();
    float* rv = running_var.data_ptr<float>();

    // one channel per task; grain size 1 since each channel is ~N*H*W elements of work
    at::parallel_for(0, C, 1, [&](int64_t c0, int64_t c1) {
        for (int64_t c = c0; c < c1; ++c) {
            double mean, var;
            if (training) {
                // two-pass mean / biased variance, accumulated in double
                double s = 0.0;
                for (int64_t n = 0; n < N; ++n) {
                    const float* p = xp + (n * C + c) * HW;
                    s += chunked_sum(p, HW, 0.f, false);
                }
                mean = s / (double)count;
                double sq = 0.0;
                const float mf = (float)mean;
                for (int64_t n = 0; n < N; ++n) {
                    const float* p = xp + (n * C + c) * HW;
                    sq += chunked_sum(p, HW, mf, true);
                }
                var = sq / (double)count;
                // running stats: unbiased variance, exponential moving average
                const double unbiased = count > 1 ? var * (double)count / (double)(count - 1) : var;
                rm[c] = (float)((1.0 - momentum) * (double)rm[c] + momentum * mean);
                rv[c] = (float)((1.0 - momentum) * (double)rv[c] + momentum * unbiased);
            } else {
                mean = rm[c];
                var = rv[c];
            }
            const double invstd = 1.0 / std::sqrt(var + eps);
            const float scale = (float)(wp[c] * invstd);
            const float shift = (float)(bp[c] - mean * wp[c] * invstd);
            for (int64_t n = 0; n < N; ++n) {
                const float* p = xp + (n * C + c) * HW;
                float* q = yp + (n * C + c) * HW;
                for (int64_t i = 0; i < HW; ++i) q[i] = p[i] * scale + shift;
            }
        }
    });

    if (training && num_batches_tracked.defined() && num_batches_tracked.numel() == 1) {
        num_batches_tracked.data_ptr<int64_t>()[0] += 1;
    }
    return out;
}
"""

_ext = load_inline(
    name="kb_l1_033_bn_cpp",
    cpp_sources=_bn_cpp,
    functions=["batchnorm2d_forward"],
    extra_cflags=["-O3", "-march=native"],
    with_cuda=False,
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, num_features: int):
        super().__init__()
        # keep the reference's module so parameters / buffers (and their init) are identical
        self.bn = nn.BatchNorm2d(num_features=num_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        bn = self.bn
        if bn.momentum is None:  # cumulative moving average
            momentum = 1.0 / float(int(bn.num_batches_tracked.item()) + 1)
        else:
            momentum = bn.momentum
        training = bn.training or not bn.track_running_stats
        return _ext.batchnorm2d_forward(
            x, bn.weight, bn.bias, bn.running_mean, bn.running_var, bn.num_batches_tracked,
            training, float(momentum), float(bn.eps),
        )


def get_inputs():
    return [torch.randn(batch_size, features, dim1, dim2)]


def get_init_inputs():
    return [features]
