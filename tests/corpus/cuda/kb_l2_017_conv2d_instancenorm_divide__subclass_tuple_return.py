# corpus: problem=kb_l2_017_conv2d_instancenorm_divide device=cuda expect=accepted policy=both
# style: class ModelNew(Model) overriding forward; conv templated on kernel size with a switch; __shfl_xor_sync block reduce; two-pass instance norm fused with the divide; std::tuple return
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


class Model(nn.Module):
    """Reference module (kept so ModelNew shares its parameters and initialisation)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, divide_by: float):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.instance_norm = nn.InstanceNorm2d(out_channels)
        self.divide_by = divide_by

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = self.instance_norm(x)
        return x / self.divide_by


kernels_cu = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <tuple>

// ------------------------------ conv2d (stride 1, no padding) ------------------------------
// Block = 16x16 output pixels, each thread also covers OCB output channels.
template <int KS, int OCB>
__global__ void __launch_bounds__(256)
conv2d_valid_kernel(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
                    float* __restrict__ y, int C, int H, int W, int OC, int OH, int OW) {
    constexpr int T = 16;
    constexpr int IT = T + KS - 1;
    __shared__ float s_in[IT][IT + 1];
    __shared__ float s_w[OCB][KS * KS];

    const int n = blockIdx.z / ((OC + OCB - 1) / OCB);
    const int oc0 = (blockIdx.z % ((OC + OCB - 1) / OCB)) * OCB;
    const int ow0 = blockIdx.x * T, oh0 = blockIdx.y * T;
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * T + tx;

    float acc[OCB];
#pragma unroll
    for (int o = 0; o < OCB; ++o) acc[o] = 0.f;

    for (int c = 0; c < C; ++c) {
        const float* xp = x + ((size_t)n * C + c) * H * W;
        for (int i = tid; i < IT * IT; i += T * T) {
            const int r = i / IT, q = i % IT;
            const int ih = oh0 + r, iw = ow0 + q;
            s_in[r][q] = (ih < H && iw < W) ? __ldg(xp + (size_t)ih * W + iw) : 0.f;
        }
        for (int i = tid; i < OCB * KS * KS; i += T * T) {
            const int o = i / (KS * KS), k = i % (KS * KS);
            s_w[o][k] = (oc0 + o < OC) ? __ldg(w + ((size_t)(oc0 + o) * C + c) * KS * KS + k) : 0.f;
        }
        __syncthreads();
#pragma unroll
        for (int kh = 0; kh < KS; ++kh)
#pragma unroll
            for (int kw = 0; kw < KS; ++kw) {
                const float v = s_in[ty + kh][tx + kw];
#pragma unroll
                for (int o = 0; o < OCB; ++o) acc[o] = fmaf(v, s_w[o][kh * KS + kw], acc[o]);
            }
        __syncthreads();
    }

    const int oh = oh0 + ty, ow = ow0 + tx;
    if (oh < OH && ow < OW) {
#pragma unroll
        for (int o = 0; o < OCB; ++o) {
            if (oc0 + o < OC)
                y[(((size_t)n * OC + oc0 + o) * OH + oh) * OW + ow] = acc[o] + (b ? __ldg(b + oc0 + o) : 0.f);
        }
    }
}

torch::Tensor conv2d_valid(torch::Tensor x, torch::Tensor w, c10::optional<torch::Tensor> b) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == at::kFloat && w.scalar_type() == at::kFloat);
    TORCH_CHECK(x.dim() == 4 && w.dim() == 4 && w.size(1) == x.size(1) && w.size(2) == w.size(3));
    c10::cuda::CUDAGuard g(x.device());
    x = x.contiguous(); w = w.contiguous();
    const int N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
    const int OC = w.size(0), K = w.size(2);
    const int OH = H - K + 1, OW = W - K + 1;
    TORCH_CHECK(OH > 0 && OW > 0);
    auto y = torch::empty({N, OC, OH, OW}, x.options());
    torch::Tensor bc;
    const float* bp = nullptr;
    if (b.has_value() && b->defined()) { bc = b->contiguous(); bp = bc.data_ptr<float>(); }

    constexpr int OCB = 16;
    dim3 block(16, 16);
    dim3 grid((OW + 15) / 16, (OH + 15) / 16, N * ((OC + OCB - 1) / OCB));
    TORCH_CHECK(grid.z <= 65535, "too many (batch, channel-block) pairs");
    auto stream = at::cuda::getCurrentCUDAStream();
    switch (K) {
        case 1: conv2d_valid_kernel<1, OCB><<<grid, block, 0, stream>>>(x.data_ptr<float>(), w.data_ptr<float>(), bp, y.data_ptr<float>(), C, H, W, OC, OH, OW); break;
        case 3: conv2d_valid_kernel<3, OCB><<<grid, block, 0, stream>>>(x.data_ptr<float>(), w.data_ptr<float>(), bp, y.data_ptr<float>(), C, H, W, OC, OH, OW); break;
        case 5: conv2d_valid_kernel<5, OCB><<<grid, block, 0, stream>>>(x.data_ptr<float>(), w.data_ptr<float>(), bp, y.data_ptr<float>(), C, H, W, OC, OH, OW); break;
        case 7: conv2d_valid_kernel<7, OCB><<<grid, block, 0, stream>>>(x.data_ptr<float>(), w.data_ptr<float>(), bp, y.data_ptr<float>(), C, H, W, OC, OH, OW); break;
        default: TORCH_CHECK(false, "kernel size ", K, " not instantiated");
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}

// ------------------------- instance norm (no affine) fused with divide -------------------------
template <int BLOCK>
__device__ __forceinline__ float block_sum(float v, float* red) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) red[warp] = v;
    __syncthreads();
    v = (threadIdx.x < BLOCK / 32) ? red[threadIdx.x] : 0.f;
    if (warp == 0) {
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
        if (lane == 0) red[0] = v;
    }
    __syncthreads();
    v = red[0];
    __syncthreads();   // red[] is reused by the next call
    return v;
}

// One block per (n, c) plane: pass 1 mean, pass 2 centred variance, pass 3 normalise + divide.
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
instance_norm_div_kernel(const float* __restrict__ x, float* __restrict__ y, float* __restrict__ mean_out,
                         float* __restrict__ rstd_out, int HW, float eps, float inv_div) {
    __shared__ float red[BLOCK / 32];
    const size_t base = (size_t)blockIdx.x * HW;
    const float* xp = x + base;
    float* yp = y + base;

    float s = 0.f;
    for (int i = threadIdx.x; i < HW; i += BLOCK) s += xp[i];
    const float mean = block_sum<BLOCK>(s, red) / (float)HW;

    float ss = 0.f;
    for (int i = threadIdx.x; i < HW; i += BLOCK) { const float d = xp[i] - mean; ss = fmaf(d, d, ss); }
    const float var = block_sum<BLOCK>(ss, red) / (float)HW;   // biased, as InstanceNorm uses
    const float rstd = rsqrtf(var + eps);

    const float scale = rstd * inv_div;
    for (int i = threadIdx.x; i < HW; i += BLOCK) yp[i] = (xp[i] - mean) * scale;
    if (threadIdx.x == 0) { mean_out[blockIdx.x] = mean; rstd_out[blockIdx.x] = rstd; }
}

std::tuple<torch::Tensor, torch::Tensor, torch::Tensor>
instance_norm_div(torch::Tensor x, double eps, double divide_by) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == at::kFloat && x.dim() == 4);
    c10::cuda::CUDAGuard g(x.device());
    x = x.contiguous();
    const int N = x.size(0), C = x.size(1), HW = x.size(2) * x.size(3);
    auto y = torch::empty_like(x);
    auto mean = torch::empty({N, C}, x.options());
    auto rstd = torch::empty({N, C}, x.options());
    constexpr int BLOCK = 512;
    instance_norm_div_kernel<BLOCK><<<N * C, BLOCK, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), mean.data_ptr<float>(), rstd.data_ptr<float>(), HW,
        (float)eps, (float)(1.0 / divide_by));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return std::make_tuple(y, mean, rstd);
}
"""

kernels_cpp = r"""
#include <torch/extension.h>
#include <tuple>
torch::Tensor conv2d_valid(torch::Tensor x, torch::Tensor w, c10::optional<torch::Tensor> b);
std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> instance_norm_div(torch::Tensor x, double eps, double divide_by);
"""

_kernels = load_inline(
    name="conv_instnorm_div_kernels",
    cpp_sources=kernels_cpp,
    cuda_sources=kernels_cu,
    functions=["conv2d_valid", "instance_norm_div"],
    extra_cuda_cflags=["-O3", "--use_fast_math"],
)


class ModelNew(Model):
    """Same parameters as Model; forward runs the custom conv and the fused instance-norm/divide kernels."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = _kernels.conv2d_valid(x, self.conv.weight, self.conv.bias)
        out, _mean, _rstd = _kernels.instance_norm_div(y, self.instance_norm.eps, self.divide_by)
        return out
