# corpus: problem=kb_l1_063_conv_standard_2d device=cpu expect=accepted policy=both
# style: direct convolution with accessors; self.conv2d = ext.fn alias; weights from an nn.Conv2d made in __init__; __main__ self-test (blind round 8)
# class: 1, 2
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

batch_size = 16
in_channels = 16
out_channels = 128
kernel_size = 3
width = 1024
height = 1024

conv_src = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <cstring>
#include <algorithm>
#include <vector>

// Direct 2-D convolution (groups == 1).
// The input is copied once into a zero-padded buffer; for stride 1 the hot loop keeps a
// 4 (out channels) x 64 (output columns) register tile, vectorised along the output row.
typedef float f32x16 __attribute__((vector_size(64)));
constexpr int OCB = 4;      // output channels per tile
constexpr int OWT = 64;     // output columns per tile (4 vectors)

torch::Tensor conv2d_forward(torch::Tensor input, torch::Tensor weight, c10::optional<torch::Tensor> bias,
                             int64_t stride, int64_t padding, int64_t dilation) {
    TORCH_CHECK(input.dim() == 4 && weight.dim() == 4, "conv2d_forward: NCHW input and OIHW weight expected");
    TORCH_CHECK(input.scalar_type() == at::kFloat && weight.scalar_type() == at::kFloat, "float32 only");
    TORCH_CHECK(input.size(1) == weight.size(1), "conv2d_forward: channel mismatch (groups must be 1)");
    TORCH_CHECK(stride >= 1 && dilation >= 1 && padding >= 0, "bad conv params");

    auto x = input.contiguous();
    auto w = weight.contiguous();
    const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
    const int64_t OC = w.size(0), KH = w.size(2), KW = w.size(3);
    const int64_t OH = (H + 2 * padding - dilation * (KH - 1) - 1) / stride + 1;
    const int64_t OW = (W + 2 * padding - dilation * (KW - 1) - 1) / stride + 1;
    TORCH_CHECK(OH > 0 && OW > 0, "conv2d_forward: output would be empty");

    auto out = torch::empty({N, OC, OH, OW}, x.options());
    auto out_a = out.accessor<float, 4>();
    auto w_a = w.accessor<float, 4>();
    std::vector<float> bvec(OC, 0.f);
    if (bias.has_value() && bias->defined()) {
        auto bc = bias->contiguous();
        auto b_a = bc.accessor<float, 1>();
        for (int64_t o = 0; o < OC; ++o) bvec[o] = b_a[o];
    }

    // zero-padded input; extra columns on the right so full 64-wide tiles can be read
    const int64_t OWr = (OW + OWT - 1) / OWT * OWT;
    const int64_t Hp = H + 2 * padding;
    const int64_t Wp = std::max<int64_t>(W + 2 * padding, (OWr - 1) * stride + dilation * (KW - 1) + 1);
    auto xp = torch::zeros({N, C, Hp, Wp}, x.options());
    {
        auto x_a = x.accessor<float, 4>();
        auto xp_a = xp.accessor<float, 4>();
        at::parallel_for(0, N * C, 1, [&](int64_t b, int64_t e) {
            for (int64_t nc = b; nc < e; ++nc) {
                const int64_t n = nc / C, c = nc % C;
                for (int64_t h = 0; h < H; ++h)
                    std::memcpy(&xp_a[n][c][h + padding][padding], &x_a[n][c][h][0], sizeof(float) * W);
            }
        });
    }

    // weights repacked as [OC/OCB][C][KH][KW][OCB], zero padded in OC
    const int64_t OCblocks = (OC + OCB - 1) / OCB;
    std::vector<float> wp(OCblocks * C * KH * KW * OCB, 0.f);
    for (int64_t o = 0; o < OC; ++o)
        for (int64_t c = 0; c < C; ++c)
            for (int64_t kh = 0; kh < KH; ++kh)
                for (int64_t kw = 0; kw < KW; ++kw)
                    wp[((((o / OCB) * C + c) * KH + kh) * KW + kw) * OCB + o % OCB] = w_a[o][c][kh][kw];

    const float* px = xp.data_ptr<float>();
    const int64_t ntasks = N * OCblocks * OH;
    at::parallel_for(0, ntasks, 1, [&](int64_t begin, int64_t end) {
        for (int64_t task = begin; task < end; ++task) {
            const int64_t oh = task % OH;
            const int64_t ob = (task / OH) % OCblocks;
            const int64_t n = task / (OH * OCblocks);
            const float* wblk = wp.data() + ob * C * KH * KW * OCB;
            const float* xn = px + n * C * Hp * Wp;
            for (int64_t ow0 = 0; ow0 < OW; ow0 += OWT) {
                alignas(64) float tile[OCB][OWT];
                if (stride == 1) {
                    f32x16 acc[OCB][4];
                    for (int o = 0; o < OCB; ++o)
                        for (int v = 0; v < 4; ++v) acc[o][v] = (f32x16){};
                    for (int64_t c = 0; c < C; ++c)
                        for (int64_t kh = 0; kh < KH; ++kh) {
                            const float* row = xn + (c * Hp + oh + kh * dilation) * Wp + ow0;
                            const float* wk = wblk + (c * KH + kh) * KW * OCB;
                            for (int64_t kw = 0; kw < KW; ++kw) {
                                const float* r = row + kw * dilation;
                                f32x16 xv[4];
                                for (int v = 0; v < 4; ++v) std::memcpy(&xv[v], r + 16 * v, 64);
#pragma GCC unroll 4
                                for (int o = 0; o < OCB; ++o) {
                                    const float wv = wk[kw * OCB + o];
#pragma GCC unroll 4
                                    for (int v = 0; v < 4; ++v) acc[o][v] += wv * xv[v];
                                }
                            }
                        }
                    for (int o = 0; o < OCB; ++o)
                        for (int v = 0; v < 4; ++v) std::memcpy(&tile[o][16 * v], &acc[o][v], 64);
                } else {
                    for (int o = 0; o < OCB; ++o)
                        for (int j = 0; j < OWT; ++j) tile[o][j] = 0.f;
                    for (int64_t c = 0; c < C; ++c)
                        for (int64_t kh = 0; kh < KH; ++kh) {
                            const float* row = xn + (c * Hp + oh * stride + kh * dilation) * Wp;
                            const float* wk = wblk + (c * KH + kh) * KW * OCB;
                            for (int64_t kw = 0; kw < KW; ++kw)
                                for (int o = 0; o < OCB; ++o) {
                                    const float wv = wk[kw * OCB + o];
                                    for (int j = 0; j < OWT; ++j)
                                        tile[o][j] += wv * row[(ow0 + j) * stride + kw * dilation];
                                }
                        }
                }
                const int64_t cols = std::min<int64_t>(OWT, OW - ow0);
                for (int o = 0; o < OCB; ++o) {
                    const int64_t oc = ob * OCB + o;
                    if (oc >= OC) break;
                    float* dst = &out_a[n][oc][oh][ow0];
                    const float bv = bvec[oc];
                    for (int64_t j = 0; j < cols; ++j) dst[j] = tile[o][j] + bv;
                }
            }
        }
    });
    return out;
}
"""

_conv_ext = load_inline(
    name="kb_conv2d_direct_accessor",
    cpp_sources=conv_src,
    functions=["conv2d_forward"],
    extra_cflags=["-O3", "-march=native"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1, padding: int = 0,
                 dilation: int = 1, groups: int = 1, bias: bool = False):
        super().__init__()
        assert groups == 1, "only groups == 1 is implemented"
        # keep nn.Conv2d so parameters and their init match the reference exactly
        self.conv2d = nn.Conv2d(in_channels, out_channels, (kernel_size, kernel_size), stride=stride,
                                padding=padding, dilation=dilation, groups=groups, bias=bias)
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.conv_op = _conv_ext.conv2d_forward

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv_op(x, self.conv2d.weight, self.conv2d.bias, self.stride, self.padding, self.dilation)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


if __name__ == "__main__":
    torch.manual_seed(0)
    for (n, c, oc, k, h, w, s, p, d, b) in [(2, 3, 5, 3, 17, 70, 1, 0, 1, False),
                                            (1, 4, 8, 3, 20, 33, 2, 1, 1, True),
                                            (2, 2, 6, 5, 19, 80, 1, 2, 2, True)]:
        m = ModelNew(c, oc, k, stride=s, padding=p, dilation=d, bias=b)
        xin = torch.randn(n, c, h, w)
        with torch.no_grad():
            ref = m.conv2d(xin)
            got = m(xin)
        print((n, c, oc, k, h, w, s, p, d, b), "max abs err", (ref - got).abs().max().item(),
              "ok" if torch.allclose(ref, got, atol=1e-4, rtol=1e-4) else "MISMATCH")
