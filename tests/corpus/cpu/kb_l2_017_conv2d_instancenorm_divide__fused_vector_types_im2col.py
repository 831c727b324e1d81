# corpus: problem=kb_l2_017_conv2d_instancenorm_divide device=cpu expect=accepted policy=both
# style: one fused C++ forward returning std::vector{y, mean, rstd}; im2col with a 4x24 tiled GEMM in GCC vector types; omp with per-thread buffers then collapse(2); __main__ self-test
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

fused_source = r"""
#include <torch/extension.h>
#include <omp.h>
#include <vector>
#include <cmath>
#include <algorithm>

namespace {

typedef float v8f __attribute__((vector_size(32)));  // GCC vector extension

constexpr int MR = 4;   // output channels per micro tile
constexpr int NR = 24;  // output pixels per micro tile

// C[M x P] = A[M x K] * B[K x P] + bias[M]   (all row-major, contiguous)
void gemm_bias(const float* __restrict__ A, const float* __restrict__ B, const float* __restrict__ bias,
               float* __restrict__ C, int64_t M, int64_t K, int64_t P) {
    const int64_t Pfull = (P / NR) * NR;
    for (int64_t p0 = 0; p0 < Pfull; p0 += NR) {
        int64_t m0 = 0;
        for (; m0 + MR <= M; m0 += MR) {
            // 4 x 24 tile kept in 12 eight-wide vector registers
            v8f acc[MR][NR / 8];
            for (int i = 0; i < MR; ++i) {
                const float bv = bias ? bias[m0 + i] : 0.f;
                for (int j = 0; j < NR / 8; ++j) acc[i][j] = v8f{bv, bv, bv, bv, bv, bv, bv, bv};
            }
            const float* a0 = A + (m0 + 0) * K;
            const float* a1 = A + (m0 + 1) * K;
            const float* a2 = A + (m0 + 2) * K;
            const float* a3 = A + (m0 + 3) * K;
            for (int64_t k = 0; k < K; ++k) {
                const float* b = B + k * P + p0;
                v8f b0, b1, b2;
                __builtin_memcpy(&b0, b, 32);
                __builtin_memcpy(&b1, b + 8, 32);
                __builtin_memcpy(&b2, b + 16, 32);
                const float w0 = a0[k], w1 = a1[k], w2 = a2[k], w3 = a3[k];
                acc[0][0] += w0 * b0; acc[0][1] += w0 * b1; acc[0][2] += w0 * b2;
                acc[1][0] += w1 * b0; acc[1][1] += w1 * b1; acc[1][2] += w1 * b2;
                acc[2][0] += w2 * b0; acc[2][1] += w2 * b1; acc[2][2] += w2 * b2;
                acc[3][0] += w3 * b0; acc[3][1] += w3 * b1; acc[3][2] += w3 * b2;
            }
            for (int i = 0; i < MR; ++i)
                for (int j = 0; j < NR / 8; ++j) __builtin_memcpy(C + (m0 + i) * P + p0 + 8 * j, &acc[i][j], 32);
        }
        for (; m0 < M; ++m0) {  // leftover rows
            float acc[NR];
            for (int j = 0; j < NR; ++j) acc[j] = bias ? bias[m0] : 0.f;
            for (int64_t k = 0; k < K; ++k) {
                const float w = A[m0 * K + k];
                const float* b = B + k * P + p0;
                for (int j = 0; j < NR; ++j) acc[j] += w * b[j];
            }
            for (int j = 0; j < NR; ++j) C[m0 * P + p0 + j] = acc[j];
        }
    }
    if (Pfull < P) {  // leftover columns
        const int64_t rem = P - Pfull;
        for (int64_t m = 0; m < M; ++m) {
            float acc[NR];
            for (int64_t j = 0; j < rem; ++j) acc[j] = bias ? bias[m] : 0.f;
            for (int64_t k = 0; k < K; ++k) {
                const float w = A[m * K + k];
                const float* b = B + k * P + Pfull;
                for (int64_t j = 0; j < rem; ++j) acc[j] += w * b[j];
            }
            for (int64_t j = 0; j < rem; ++j) C[m * P + Pfull + j] = acc[j];
        }
    }
}

// col[(ci*KH + kh)*KW + kw][oh*OW + ow] = x[ci][oh*s - pad + kh][ow*s - pad + kw] (0 outside)
void im2col(const float* __restrict__ x, float* __restrict__ col, int64_t Cin, int64_t H, int64_t W,
            int64_t KH, int64_t KW, int64_t OH, int64_t OW, int64_t stride, int64_t pad) {
    for (int64_t ci = 0; ci < Cin; ++ci)
        for (int64_t kh = 0; kh < KH; ++kh)
            for (int64_t kw = 0; kw < KW; ++kw) {
                float* dst = col + ((ci * KH + kh) * KW + kw) * OH * OW;
                for (int64_t oh = 0; oh < OH; ++oh) {
                    const int64_t ih = oh * stride - pad + kh;
                    float* drow = dst + oh * OW;
                    if (ih < 0 || ih >= H) { std::fill(drow, drow + OW, 0.f); continue; }
                    const float* srow = x + (ci * H + ih) * W;
                    for (int64_t ow = 0; ow < OW; ++ow) {
                        const int64_t iw = ow * stride - pad + kw;
                        drow[ow] = (iw >= 0 && iw < W) ? srow[iw] : 0.f;
                    }
                }
            }
}

}  // namespace

// conv2d -> instance norm (no affine, biased variance) -> divide, all in one call.
// Returns {y, per-(n,c) mean, per-(n,c) inverse std}.
std::vector<torch::Tensor> conv_instnorm_div_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias,
                                                     int64_t stride, int64_t padding, double eps, double divide_by) {
    TORCH_CHECK(x.dim() == 4 && weight.dim() == 4, "expected 4-D input and weight");
    TORCH_CHECK(x.scalar_type() == torch::kFloat && weight.scalar_type() == torch::kFloat, "float32 only");
    x = x.contiguous();
    weight = weight.contiguous();
    const bool has_bias = bias.defined() && bias.numel() > 0;
    if (has_bias) bias = bias.contiguous();

    const int64_t N = x.size(0), Cin = x.size(1), H = x.size(2), W = x.size(3);
    const int64_t Cout = weight.size(0), KH = weight.size(2), KW = weight.size(3);
    TORCH_CHECK(weight.size(1) == Cin, "channel mismatch");
    const int64_t OH = (H + 2 * padding - KH) / stride + 1;
    const int64_t OW = (W + 2 * padding - KW) / stride + 1;
    const int64_t P = OH * OW, K = Cin * KH * KW;

    auto y = torch::empty({N, Cout, OH, OW}, x.options());
    auto mean = torch::empty({N, Cout}, x.options());
    auto rstd = torch::empty({N, Cout}, x.options());

    const float* xp = x.data_ptr<float>();
    const float* wp = weight.data_ptr<float>();
    const float* bp = has_bias ? bias.data_ptr<float>() : nullptr;
    float* yp = y.data_ptr<float>();
    float* mp = mean.data_ptr<float>();
    float* rp = rstd.data_ptr<float>();

    // 1) convolution: im2col + register-tiled GEMM, one image per thread iteration
    #pragma omp parallel
    {
        std::vector<float> col((size_t)K * P);
        #pragma omp for schedule(dynamic, 1)
        for (int64_t n = 0; n < N; ++n) {
            im2col(xp + n * Cin * H * W, col.data(), Cin, H, W, KH, KW, OH, OW, stride, padding);
            gemm_bias(wp, col.data(), bp, yp + n * Cout * P, Cout, K, P);
        }
    }

    // 2) instance norm + divide, one (n, c) plane per iteration, in place on y
    const float inv_div = (float)(1.0 / divide_by);
    #pragma omp parallel for collapse(2) schedule(static)
    for (int64_t n = 0; n < N; ++n) {
        for (int64_t c = 0; c < Cout; ++c) {
            float* plane = yp + (n * Cout + c) * P;
            double s = 0.0;
            for (int64_t i = 0; i < P; ++i) s += plane[i];
            const double mu = s / (double)P;
            double sq = 0.0;
            for (int64_t i = 0; i < P; ++i) { const double d = plane[i] - mu; sq += d * d; }
            const double var = sq / (double)P;
            const double inv = 1.0 / std::sqrt(var + eps);
            mp[n * Cout + c] = (float)mu;
            rp[n * Cout + c] = (float)inv;
            const float scale = (float)(inv) * inv_div;
            const float shift = (float)(-mu * inv) * inv_div;
            for (int64_t i = 0; i < P; ++i) plane[i] = plane[i] * scale + shift;
        }
    }
    return {y, mean, rstd};
}
"""

fused = load_inline(
    name="kb_l2_017_conv_in_div",
    cpp_sources=fused_source,
    functions=["conv_instnorm_div_forward"],
    extra_cflags=["-O3", "-march=native", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    with_cuda=False,
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, divide_by: float):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.instance_norm = nn.InstanceNorm2d(out_channels)
        self.divide_by = divide_by

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y, _mean, _rstd = fused.conv_instnorm_div_forward(
            x, self.conv.weight, self.conv.bias, self.conv.stride[0], self.conv.padding[0],
            self.instance_norm.eps, float(self.divide_by))
        return y


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, divide_by]


if __name__ == "__main__":
    import time
    torch.manual_seed(0)
    conv = nn.Conv2d(16, 24, 3)
    x = torch.randn(3, 16, 29, 31)
    m = ModelNew(16, 24, 3, divide_by)
    m.conv.load_state_dict(conv.state_dict())
    ref = nn.functional.instance_norm(conv(x)) / divide_by
    with torch.no_grad():
        out = m(x)
    print("max abs err:", (out - ref).abs().max().item())
    x = torch.randn(4, in_channels, 64, 64)
    m = ModelNew(in_channels, out_channels, kernel_size, divide_by)
    with torch.no_grad():
        t0 = time.time(); out = m(x); t1 = time.time()
        ref = nn.functional.instance_norm(m.conv(x)) / divide_by; t2 = time.time()
    flops = 2 * 4 * out_channels * 62 * 62 * in_channels * 9
    print("max abs err:", (out - ref).abs().max().item(), "custom %.3fs (%.1f GFLOP/s), torch %.3fs" % (t1 - t0, flops / (t1 - t0) / 1e9, t2 - t1))
