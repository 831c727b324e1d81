# corpus: problem=kb_l2_037_matmul_swish_sum_groupnorm device=cpu expect=accepted policy=both
# style: self.op = ext.fn aliases for two functions in __init__, x.contiguous(memory_format=...), AT_DISPATCH_FLOATING_TYPES with packed_accessor32, at::parallel_for, a GEMM + Swish + bias kernel then an in-place GroupNorm kernel on its output (blind round 13)
# class: 1, 8
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_src = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <algorithm>
#include <cmath>

// out[m, n] = swish(x[m] . w[n] + lin_b[n]) + extra_b[n]
torch::Tensor linear_swish_bias(const torch::Tensor& x, const torch::Tensor& w,
                                const torch::Tensor& lin_b, const torch::Tensor& extra_b) {
    TORCH_CHECK(x.dim() == 2 && w.dim() == 2 && x.size(1) == w.size(1), "bad shapes");
    auto xc = x.contiguous();
    auto wc = w.contiguous();
    const int64_t M = xc.size(0), K = xc.size(1), N = wc.size(0);
    auto out = torch::empty({M, N}, xc.options());

    AT_DISPATCH_FLOATING_TYPES(xc.scalar_type(), "linear_swish_bias", [&] {
        auto xa = xc.packed_accessor32<scalar_t, 2>();
        auto wa = wc.packed_accessor32<scalar_t, 2>();
        auto lb = lin_b.packed_accessor32<scalar_t, 1>();
        auto eb = extra_b.packed_accessor32<scalar_t, 1>();
        auto oa = out.packed_accessor32<scalar_t, 2>();
        at::parallel_for(0, M, 4, [&](int64_t m0, int64_t m1) {
            for (int64_t m = m0; m < m1; ++m) {
                const scalar_t* xr = &xa[m][0];
                for (int64_t n = 0; n < N; ++n) {
                    const scalar_t* wr = &wa[n][0];
                    scalar_t acc = 0;
                    for (int64_t k = 0; k < K; ++k) acc += xr[k] * wr[k];
                    acc += lb[n];
                    const scalar_t sig = scalar_t(1) / (scalar_t(1) + std::exp(-acc));
                    oa[m][n] = sig * acc + eb[n];
                }
            }
        });
    });
    return out;
}

// In-place GroupNorm over a (M, C) tensor: groups of C / G contiguous channels.
at::Tensor group_norm_2d_(at::Tensor y, const at::Tensor& gamma, const at::Tensor& beta,
                          int64_t num_groups, double eps) {
    TORCH_CHECK(y.dim() == 2 && y.is_contiguous(), "y must be a contiguous (M, C) tensor");
    const int64_t M = y.size(0), C = y.size(1);
    TORCH_CHECK(C % num_groups == 0, "C must be divisible by num_groups");
    const int64_t gs = C / num_groups;

    AT_DISPATCH_FLOATING_TYPES(y.scalar_type(), "group_norm_2d_", [&] {
        auto ya = y.packed_accessor32<scalar_t, 2>();
        auto ga = gamma.packed_accessor32<scalar_t, 1>();
        auto ba = beta.packed_accessor32<scalar_t, 1>();
        at::parallel_for(0, M * num_groups, 16, [&](int64_t b0, int64_t b1) {
            for (int64_t idx = b0; idx < b1; ++idx) {
                const int64_t m = idx / num_groups;
                const int64_t c0 = (idx % num_groups) * gs;
                double s = 0.0, ss = 0.0;
                for (int64_t c = c0; c < c0 + gs; ++c) {
                    const double v = ya[m][c];
                    s += v;
                    ss += v * v;
                }
                const double mean = s / gs;
                const double var = std::max(ss / gs - mean * mean, 0.0);
                const scalar_t rstd = static_cast<scalar_t>(1.0 / std::sqrt(var + eps));
                const scalar_t mu = static_cast<scalar_t>(mean);
                for (int64_t c = c0; c < c0 + gs; ++c) {
                    ya[m][c] = (ya[m][c] - mu) * rstd * ga[c] + ba[c];
                }
            }
        });
    });
    return y;
}
"""

ext = load_inline(
    name="kb_l2_037_matmul_swish_sum_groupnorm__aliases_packedaccessor_inplace_gn_dispatch",
    cpp_sources=cpp_src,
    functions=["linear_swish_bias", "group_norm_2d_"],
    extra_cflags=["-O3", "-march=native"],
    with_cuda=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, num_groups, bias_shape):
        super(ModelNew, self).__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.group_norm = nn.GroupNorm(num_groups, out_features)
        self.linear_swish_bias = ext.linear_swish_bias
        self.group_norm_ = ext.group_norm_2d_

    def forward(self, x):
        x = x.contiguous(memory_format=torch.contiguous_format)
        y = self.linear_swish_bias(x, self.matmul.weight, self.matmul.bias, self.bias)
        gn = self.group_norm
        return self.group_norm_(y, gn.weight, gn.bias, gn.num_groups, gn.eps)
