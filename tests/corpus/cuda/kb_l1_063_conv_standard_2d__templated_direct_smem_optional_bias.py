# corpus: problem=kb_l1_063_conv_standard_2d device=cuda expect=accepted policy=both
# style: direct convolution templated on kernel size with a runtime fallback; extern __shared__; c10::optional bias; stride/padding/dilation; groups checked (blind round 8)
# class: 2
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

conv2d_cuda_src = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

// Direct convolution (groups == 1), NCHW, float32.
// Block: TILE_W x TILE_H output pixels, each thread accumulates OC_PER_BLOCK output channels of one pixel.
// For every input channel the (halo-extended) input patch and the OC_PER_BLOCK x KH x KW filter slice are
// staged in shared memory; the kernel-size loops are unrolled when KS is known at compile time.

constexpr int TILE_W = 32;
constexpr int TILE_H = 8;
constexpr int OC_PER_BLOCK = 16;

template <int KS>   // KS > 0: square kernel of compile-time size; KS == 0: runtime kh/kw
__global__ void __launch_bounds__(TILE_W * TILE_H)
conv2d_direct_kernel(const float* __restrict__ input,   // [N, C, H, W]
                     const float* __restrict__ weight,  // [OC, C, KH, KW]
                     const float* __restrict__ bias,    // [OC] or nullptr
                     float* __restrict__ output,        // [N, OC, OH, OW]
                     int N, int C, int H, int W, int OC, int OH, int OW,
                     int kh_rt, int kw_rt, int stride, int pad, int dil,
                     int in_tile_h, int in_tile_w) {
    const int KH = KS > 0 ? KS : kh_rt;
    const int KW = KS > 0 ? KS : kw_rt;

    extern __shared__ float smem[];
    float* s_in = smem;                                  // in_tile_h * in_tile_w
    float* s_w = smem + in_tile_h * in_tile_w;           // OC_PER_BLOCK * KH * KW

    const int oc_blocks = (OC + OC_PER_BLOCK - 1) / OC_PER_BLOCK;
    const int n = blockIdx.z / oc_blocks;
    const int oc0 = (blockIdx.z % oc_blocks) * OC_PER_BLOCK;

    const int tx = threadIdx.x % TILE_W;
    const int ty = threadIdx.x / TILE_W;
    const int ow = blockIdx.x * TILE_W + tx;
    const int oh = blockIdx.y * TILE_H + ty;

    // Top-left input coordinate of this block's receptive field.
    const int ih0 = blockIdx.y * TILE_H * stride - pad;
    const int iw0 = blockIdx.x * TILE_W * stride - pad;

    float acc[OC_PER_BLOCK];
#pragma unroll
    for (int o = 0; o < OC_PER_BLOCK; ++o) acc[o] = 0.f;

    const int nthreads = TILE_W * TILE_H;
    const int kk = KH * KW;

    for (int c = 0; c < C; ++c) {
        const float* in_c = input + ((size_t)n * C + c) * H * W;
        for (int i = threadIdx.x; i < in_tile_h * in_tile_w; i += nthreads) {
            const int r = i / in_tile_w, q = i % in_tile_w;
            const int ih = ih0 + r, iw = iw0 + q;
            s_in[i] = (ih >= 0 && ih < H && iw >= 0 && iw < W) ? __ldg(in_c + (size_t)ih * W + iw) : 0.f;
        }
        for (int i = threadIdx.x; i < OC_PER_BLOCK * kk; i += nthreads) {
            const int o = i / kk, r = i % kk;
            s_w[i] = (oc0 + o < OC) ? __ldg(weight + ((size_t)(oc0 + o) * C + c) * kk + r) : 0.f;
        }
        __syncthreads();

        const int sy = ty * stride, sx = tx * stride;
#pragma unroll
        for (int ky = 0; ky < KH; ++ky) {
#pragma unroll
            for (int kx = 0; kx < KW; ++kx) {
                const float v = s_in[(sy + ky * dil) * in_tile_w + (sx + kx * dil)];
#pragma unroll
                for (int o = 0; o < OC_PER_BLOCK; ++o) acc[o] = fmaf(v, s_w[o * kk + ky * KW + kx], acc[o]);
            }
        }
        __syncthreads();
    }

    if (oh < OH && ow < OW) {
#pragma unroll
        for (int o = 0; o < OC_PER_BLOCK; ++o) {
            const int oc = oc0 + o;
            if (oc < OC) {
                const float b = bias != nullptr ? __ldg(bias + oc) : 0.f;
                output[(((size_t)n * OC + oc) * OH + oh) * OW + ow] = acc[o] + b;
            }
        }
    }
}

torch::Tensor conv2d_forward(torch::Tensor input, torch::Tensor weight, c10::optional<torch::Tensor> bias,
                             int64_t stride, int64_t padding, int64_t dilation, int64_t groups) {
    TORCH_CHECK(input.is_cuda() && weight.is_cuda(), "input and weight must be CUDA tensors");
    TORCH_CHECK(input.dim() == 4 && weight.dim() == 4, "expected 4D input and weight");
    TORCH_CHECK(input.scalar_type() == at::kFloat && weight.scalar_type() == at::kFloat, "float32 only");
    TORCH_CHECK(groups == 1, "only groups == 1 is implemented");
    TORCH_CHECK(stride >= 1 && dilation >= 1 && padding >= 0, "invalid conv params");
    const c10::cuda::CUDAGuard guard(input.device());

    auto x = input.contiguous();
    auto w = weight.contiguous();
    const int N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
    const int OC = w.size(0), KH = w.size(2), KW = w.size(3);
    TORCH_CHECK(w.size(1) == C, "weight in_channels mismatch");
    const int s = (int)stride, p = (int)padding, d = (int)dilation;
    const int OH = (H + 2 * p - d * (KH - 1) - 1) / s + 1;
    const int OW = (W + 2 * p - d * (KW - 1) - 1) / s + 1;
    TORCH_CHECK(OH > 0 && OW > 0, "output size is non-positive");

    auto out = torch::empty({N, OC, OH, OW}, x.options());

    const float* bias_ptr = nullptr;
    torch::Tensor b;
    if (bias.has_value() && bias->defined()) {
        b = bias->contiguous();
        TORCH_CHECK(b.numel() == OC, "bias must have out_channels elements");
        bias_ptr = b.data_ptr<float>();
    }

    const int in_tile_h = (TILE_H - 1) * s + (KH - 1) * d + 1;
    const int in_tile_w = (TILE_W - 1) * s + (KW - 1) * d + 1;
    const size_t smem = (size_t)(in_tile_h * in_tile_w + OC_PER_BLOCK * KH * KW) * sizeof(float);
    TORCH_CHECK(smem <= 48 * 1024, "conv configuration needs too much shared memory");

    const int oc_blocks = (OC + OC_PER_BLOCK - 1) / OC_PER_BLOCK;
    dim3 block(TILE_W * TILE_H);
    dim3 grid((OW + TILE_W - 1) / TILE_W, (OH + TILE_H - 1) / TILE_H, N * oc_blocks);
    TORCH_CHECK(grid.y <= 65535 && grid.z <= 65535, "grid too large");
    auto stream = at::cuda::getCurrentCUDAStream();

#define LAUNCH_CONV(KS_)                                                                         \
    conv2d_direct_kernel<KS_><<<grid, block, smem, stream>>>(                                    \
        x.data_ptr<float>(), w.data_ptr<float>(), bias_ptr, out.data_ptr<float>(),               \
        N, C, H, W, OC, OH, OW, KH, KW, s, p, d, in_tile_h, in_tile_w)

    if (KH == KW && KH == 3)      LAUNCH_CONV(3);
    else if (KH == KW && KH == 1) LAUNCH_CONV(1);
    else if (KH == KW && KH == 5) LAUNCH_CONV(5);
    else                          LAUNCH_CONV(0);
#undef LAUNCH_CONV
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

conv2d_cpp_src = r"""
torch::Tensor conv2d_forward(torch::Tensor input, torch::Tensor weight, c10::optional<torch::Tensor> bias,
                             int64_t stride, int64_t padding, int64_t dilation, int64_t groups);
"""

conv2d_ext = load_inline(
    name="conv2d_direct_templated",
    cpp_sources=conv2d_cpp_src,
    cuda_sources=conv2d_cuda_src,
    functions=["conv2d_forward"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1, padding: int = 0,
                 dilation: int = 1, groups: int = 1, bias: bool = False):
        super().__init__()
        # Keep the reference's Conv2d so the seeded weight init is identical.
        self.conv2d = nn.Conv2d(in_channels, out_channels, (kernel_size, kernel_size), stride=stride,
                                padding=padding, dilation=dilation, groups=groups, bias=bias)
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.groups = groups

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return conv2d_ext.conv2d_forward(x, self.conv2d.weight, self.conv2d.bias,
                                         self.stride, self.padding, self.dilation, self.groups)
