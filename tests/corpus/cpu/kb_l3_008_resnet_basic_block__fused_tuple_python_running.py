# corpus: problem=kb_l3_008_resnet_basic_block device=cpu expect=accepted policy=kernelbench
# style: keeps every nn submodule; one fused C++ forward returning a 7-element std::tuple (output and each BN's batch mean/var); at::parallel_for; running buffers updated in Python with torch ops; @torch.no_grad()
# class: 2,3
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

batch_size = 10
in_channels = 3
out_channels = 64
stride = 1
height = width = 224

block_src = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <tuple>
#include <vector>
#include <cmath>
#include <algorithm>

typedef float v8f __attribute__((vector_size(32)));

// ---------------------------------------------------------------- GEMM: C[M,P] = A[M,K] * B[K,P]
static void gemm(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                 int64_t M, int64_t K, int64_t P) {
    constexpr int64_t NR = 16;
    const int64_t Pf = (P / NR) * NR;
    for (int64_t p0 = 0; p0 < Pf; p0 += NR) {
        int64_t m0 = 0;
        for (; m0 + 6 <= M; m0 += 6) {
            v8f acc[6][2];
            for (int i = 0; i < 6; ++i) { acc[i][0] = v8f{}; acc[i][1] = v8f{}; }
            for (int64_t k = 0; k < K; ++k) {
                v8f b0, b1;
                __builtin_memcpy(&b0, B + k * P + p0, 32);
                __builtin_memcpy(&b1, B + k * P + p0 + 8, 32);
                for (int i = 0; i < 6; ++i) {
                    const float a = A[(m0 + i) * K + k];
                    acc[i][0] += a * b0;
                    acc[i][1] += a * b1;
                }
            }
            for (int i = 0; i < 6; ++i) {
                __builtin_memcpy(C + (m0 + i) * P + p0, &acc[i][0], 32);
                __builtin_memcpy(C + (m0 + i) * P + p0 + 8, &acc[i][1], 32);
            }
        }
        for (; m0 < M; ++m0) {
            v8f a0 = v8f{}, a1 = v8f{};
            for (int64_t k = 0; k < K; ++k) {
                v8f b0, b1;
                __builtin_memcpy(&b0, B + k * P + p0, 32);
                __builtin_memcpy(&b1, B + k * P + p0 + 8, 32);
                const float a = A[m0 * K + k];
                a0 += a * b0;
                a1 += a * b1;
            }
            __builtin_memcpy(C + m0 * P + p0, &a0, 32);
            __builtin_memcpy(C + m0 * P + p0 + 8, &a1, 32);
        }
    }
    for (int64_t m = 0; m < M; ++m)
        for (int64_t p = Pf; p < P; ++p) {
            float s = 0.f;
            for (int64_t k = 0; k < K; ++k) s += A[m * K + k] * B[k * P + p];
            C[m * P + p] = s;
        }
}

// ---------------------------------------------------------------- conv2d (no bias), NCHW
static torch::Tensor conv2d_nobias(const torch::Tensor& x, const torch::Tensor& w, int64_t stride, int64_t pad) {
    const int64_t N = x.size(0), Cin = x.size(1), H = x.size(2), W = x.size(3);
    const int64_t Cout = w.size(0), KH = w.size(2), KW = w.size(3);
    const int64_t OH = (H + 2 * pad - KH) / stride + 1, OW = (W + 2 * pad - KW) / stride + 1;
    const int64_t P = OH * OW, K = Cin * KH * KW;
    auto y = torch::empty({N, Cout, OH, OW}, x.options());
    const float* xp = x.data_ptr<float>();
    const float* wp = w.data_ptr<float>();
    float* yp = y.data_ptr<float>();
    const bool direct = (KH == 1 && KW == 1 && stride == 1 && pad == 0);  // 1x1: input plane is already the "col"
    at::parallel_for(0, N, 1, [&](int64_t n0, int64_t n1) {
        std::vector<float> col(direct ? 0 : (size_t)K * P);
        for (int64_t n = n0; n < n1; ++n) {
            const float* xn = xp + n * Cin * H * W;
            const float* B = xn;
            if (!direct) {
                for (int64_t ci = 0; ci < Cin; ++ci)
                    for (int64_t kh = 0; kh < KH; ++kh)
                        for (int64_t kw = 0; kw < KW; ++kw) {
                            float* dst = col.data() + ((ci * KH + kh) * KW + kw) * P;
                            for (int64_t oh = 0; oh < OH; ++oh) {
                                const int64_t ih = oh * stride - pad + kh;
                                float* d = dst + oh * OW;
                                if (ih < 0 || ih >= H) { std::fill(d, d + OW, 0.f); continue; }
                                const float* s = xn + (ci * H + ih) * W;
                                for (int64_t ow = 0; ow < OW; ++ow) {
                                    const int64_t iw = ow * stride - pad + kw;
                                    d[ow] = (iw >= 0 && iw < W) ? s[iw] : 0.f;
                                }
                            }
                        }
                B = col.data();
            }
            gemm(wp, B, yp + n * Cout * P, Cout, K, P);
        }
    });
    return y;
}

// ---------------------------------------------------------------- batch norm (in place)
// training: batch statistics (returned as mean and biased var); eval: running statistics.
static std::pair<torch::Tensor, torch::Tensor> batchnorm_inplace(torch::Tensor& y, const torch::Tensor& gamma,
        const torch::Tensor& beta, const torch::Tensor& rmean, const torch::Tensor& rvar,
        bool training, double eps, bool relu) {
    const int64_t N = y.size(0), C = y.size(1), HW = y.size(2) * y.size(3);
    auto bmean = torch::empty({C}, y.options());
    auto bvar = torch::empty({C}, y.options());
    float* yp = y.data_ptr<float>();
    const float* g = gamma.data_ptr<float>();
    const float* b = beta.data_ptr<float>();
    const float* rm = rmean.data_ptr<float>();
    const float* rv = rvar.data_ptr<float>();
    float* bm = bmean.data_ptr<float>();
    float* bv = bvar.data_ptr<float>();
    at::parallel_for(0, C, 4, [&](int64_t c0, int64_t c1) {
        for (int64_t c = c0; c < c1; ++c) {
            double mean, var;
            if (training) {
                double s = 0.0;
                for (int64_t n = 0; n < N; ++n) {
                    const float* p = yp + (n * C + c) * HW;
                    for (int64_t i = 0; i < HW; ++i) s += p[i];
                }
                mean = s / (double)(N * HW);
                double sq = 0.0;
                for (int64_t n = 0; n < N; ++n) {
                    const float* p = yp + (n * C + c) * HW;
                    for (int64_t i = 0; i < HW; ++i) { const double d = p[i] - mean; sq += d * d; }
                }
                var = sq / (double)(N * HW);
            } else {
                mean = rm[c];
                var = rv[c];
            }
            bm[c] = (float)mean;
            bv[c] = (float)var;
            const double inv = 1.0 / std::sqrt(var + eps);
            const float scale = (float)(g[c] * inv);
            const float shift = (float)(b[c] - mean * g[c] * inv);
            for (int64_t n = 0; n < N; ++n) {
                float* p = yp + (n * C + c) * HW;
                if (relu) {
                    for (int64_t i = 0; i < HW; ++i) { const float v = p[i] * scale + shift; p[i] = v > 0.f ? v : 0.f; }
                } else {
                    for (int64_t i = 0; i < HW; ++i) p[i] = p[i] * scale + shift;
                }
            }
        }
    });
    return {bmean, bvar};
}

// ---------------------------------------------------------------- the whole block
// returns (out, mean1, var1, mean2, var2, mean_ds, var_ds); the statistics are the batch ones
// (biased variance) when training, so the caller can update its running buffers.
std::tuple<torch::Tensor, torch::Tensor, torch::Tensor, torch::Tensor, torch::Tensor, torch::Tensor, torch::Tensor>
basic_block_forward(torch::Tensor x,
                    torch::Tensor w1, torch::Tensor g1, torch::Tensor b1, torch::Tensor rm1, torch::Tensor rv1,
                    torch::Tensor w2, torch::Tensor g2, torch::Tensor b2, torch::Tensor rm2, torch::Tensor rv2,
                    torch::Tensor wd, torch::Tensor gd, torch::Tensor bd, torch::Tensor rmd, torch::Tensor rvd,
                    int64_t stride, bool training, double eps1, double eps2, double epsd) {
    TORCH_CHECK(x.dim() == 4 && x.scalar_type() == torch::kFloat, "x must be a float32 NCHW tensor");
    x = x.contiguous();
    w1 = w1.contiguous(); w2 = w2.contiguous(); wd = wd.contiguous();

    auto identity = conv2d_nobias(x, wd, stride, 0);
    auto sd = batchnorm_inplace(identity, gd, bd, rmd, rvd, training, epsd, false);

    auto out = conv2d_nobias(x, w1, stride, 1);
    auto s1 = batchnorm_inplace(out, g1, b1, rm1, rv1, training, eps1, true);

    auto out2 = conv2d_nobias(out, w2, 1, 1);
    auto s2 = batchnorm_inplace(out2, g2, b2, rm2, rv2, training, eps2, false);

    // residual add + ReLU, in place on out2
    float* o = out2.data_ptr<float>();
    const float* id = identity.data_ptr<float>();
    const int64_t total = out2.numel();
    at::parallel_for(0, total, 1 << 16, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) { const float v = o[i] + id[i]; o[i] = v > 0.f ? v : 0.f; }
    });
    return std::make_tuple(out2, s1.first, s1.second, s2.first, s2.second, sd.first, sd.second);
}
"""

block_ext = load_inline(
    name="kb_l3_008_basic_block_fused",
    cpp_sources=block_src,
    functions=["basic_block_forward"],
    extra_cflags=["-O3", "-march=native"],
    with_cuda=False,
)


def _update_running(bn: nn.BatchNorm2d, mean: torch.Tensor, var: torch.Tensor, count: int) -> None:
    # nn.BatchNorm2d's running-statistics update (unbiased variance), done with torch ops
    if not (bn.training and bn.track_running_stats):
        return
    bn.num_batches_tracked.add_(1)
    m = bn.momentum if bn.momentum is not None else 1.0 / float(bn.num_batches_tracked.item())
    unbiased = var * (count / max(count - 1, 1))
    bn.running_mean.mul_(1 - m).add_(mean, alpha=m)
    bn.running_var.mul_(1 - m).add_(unbiased, alpha=m)


class ModelNew(nn.Module):
    expansion = 1

    def __init__(self, in_channels: int, out_channels: int, stride: int = 1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, out_channels, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.downsample = nn.Sequential(
            nn.Conv2d(in_channels, out_channels * self.expansion, 1, stride=stride, bias=False),
            nn.BatchNorm2d(out_channels * self.expansion),
        )
        self.stride = stride

    @torch.no_grad()
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dconv, dbn = self.downsample[0], self.downsample[1]
        training = self.training
        out, m1, v1, m2, v2, md, vd = block_ext.basic_block_forward(
            x,
            self.conv1.weight, self.bn1.weight, self.bn1.bias, self.bn1.running_mean, self.bn1.running_var,
            self.conv2.weight, self.bn2.weight, self.bn2.bias, self.bn2.running_mean, self.bn2.running_var,
            dconv.weight, dbn.weight, dbn.bias, dbn.running_mean, dbn.running_var,
            self.stride, training, self.bn1.eps, self.bn2.eps, dbn.eps,
        )
        if training:
            count = out.shape[0] * out.shape[2] * out.shape[3]
            _update_running(self.bn1, m1, v1, count)
            _update_running(self.bn2, m2, v2, count)
            _update_running(dbn, md, vd, count)
        return out


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, stride]
