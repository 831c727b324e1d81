# corpus: problem=kb_l3_008_resnet_basic_block device=cuda expect=accepted policy=kernelbench
# style: direct conv with dynamic shared memory, BN batch stats via __shfl_xor_sync + double atomics, in-place BN-ReLU and BN-add-ReLU kernels, std::vector<torch::Tensor> return, PYBIND11_MODULE in cpp_sources, running-stat updates in PyTorch, __main__ self-test seeding torch
# class: 2,3
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

batch_size = 10
in_channels = 3
out_channels = 64
stride = 1
height = width = 224

resblock_cuda = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <vector>

#define CONV_TILE 16
#define CONV_OCT 16          // output channels per block
#define STAT_THREADS 512
#define STAT_SPLIT 16

// ---------------------------------------------------------------------------
// Direct convolution (no bias). One block = 16x16 output pixels x 16 output
// channels of one image. Input patch + weight slice per input channel are
// staged in dynamic shared memory.
// ---------------------------------------------------------------------------
__global__ void __launch_bounds__(CONV_TILE * CONV_TILE)
conv2d_direct_kernel(const float* __restrict__ x, const float* __restrict__ w,
                     float* __restrict__ y,
                     int C, int H, int W, int OC, int K, int stride, int pad,
                     int Ho, int Wo, int tiles_x) {
    extern __shared__ float smem[];
    const int P = (CONV_TILE - 1) * stride + K;
    float* patch = smem;                 // P * P
    float* wsh = smem + P * P;           // CONV_OCT * K * K

    const int tile_x = blockIdx.x % tiles_x;
    const int tile_y = blockIdx.x / tiles_x;
    const int oc0 = blockIdx.y * CONV_OCT;
    const int n = blockIdx.z;
    const int tid = threadIdx.y * CONV_TILE + threadIdx.x;
    const int ox = tile_x * CONV_TILE + threadIdx.x;
    const int oy = tile_y * CONV_TILE + threadIdx.y;
    const int ix0 = tile_x * CONV_TILE * stride - pad;
    const int iy0 = tile_y * CONV_TILE * stride - pad;
    const int KK = K * K;

    float acc[CONV_OCT];
    #pragma unroll
    for (int o = 0; o < CONV_OCT; ++o) acc[o] = 0.0f;

    for (int c = 0; c < C; ++c) {
        const float* xc = x + ((int64_t)n * C + c) * H * W;
        for (int i = tid; i < P * P; i += CONV_TILE * CONV_TILE) {
            const int py = i / P, px = i - (i / P) * P;
            const int iy = iy0 + py, ix = ix0 + px;
            patch[i] = (iy >= 0 && iy < H && ix >= 0 && ix < W) ? __ldg(xc + (int64_t)iy * W + ix) : 0.0f;
        }
        for (int i = tid; i < CONV_OCT * KK; i += CONV_TILE * CONV_TILE) {
            const int o = i / KK, r = i - (i / KK) * KK;
            wsh[i] = (oc0 + o < OC) ? __ldg(w + ((int64_t)(oc0 + o) * C + c) * KK + r) : 0.0f;
        }
        __syncthreads();
        for (int kh = 0; kh < K; ++kh) {
            for (int kw = 0; kw < K; ++kw) {
                const float v = patch[(threadIdx.y * stride + kh) * P + threadIdx.x * stride + kw];
                #pragma unroll
                for (int o = 0; o < CONV_OCT; ++o) acc[o] = fmaf(v, wsh[o * KK + kh * K + kw], acc[o]);
            }
        }
        __syncthreads();
    }

    if (ox < Wo && oy < Ho) {
        #pragma unroll
        for (int o = 0; o < CONV_OCT; ++o) {
            if (oc0 + o < OC)
                y[(((int64_t)n * OC + oc0 + o) * Ho + oy) * Wo + ox] = acc[o];
        }
    }
}

// ---------------------------------------------------------------------------
// BatchNorm batch statistics: per-channel sum / sum of squares (double), then
// finalize to mean and biased variance.
// ---------------------------------------------------------------------------
__device__ __forceinline__ double warp_sum(double v) {
    #pragma unroll
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

__global__ void __launch_bounds__(STAT_THREADS)
bn_partial_stats_kernel(const float* __restrict__ x, double* __restrict__ ws,
                        int N, int C, int64_t HW) {
    const int c = blockIdx.x;
    const int64_t per_c = (int64_t)N * HW;
    const int64_t chunk = (per_c + STAT_SPLIT - 1) / STAT_SPLIT;
    const int64_t begin = blockIdx.y * chunk;
    const int64_t end = min(per_c, begin + chunk);

    double s = 0.0, ss = 0.0;
    for (int64_t j = begin + threadIdx.x; j < end; j += STAT_THREADS) {
        const int64_t n = j / HW;
        const int64_t i = j - n * HW;
        const float v = x[(n * C + c) * HW + i];
        s += v;
        ss += (double)v * v;
    }
    __shared__ double sh_s[STAT_THREADS / 32], sh_ss[STAT_THREADS / 32];
    s = warp_sum(s);
    ss = warp_sum(ss);
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    if (lane == 0) { sh_s[wid] = s; sh_ss[wid] = ss; }
    __syncthreads();
    if (wid == 0) {
        s = (lane < STAT_THREADS / 32) ? sh_s[lane] : 0.0;
        ss = (lane < STAT_THREADS / 32) ? sh_ss[lane] : 0.0;
        s = warp_sum(s);
        ss = warp_sum(ss);
        if (lane == 0) {
            atomicAdd(ws + 2 * c, s);
            atomicAdd(ws + 2 * c + 1, ss);
        }
    }
}

__global__ void bn_finalize_kernel(const double* __restrict__ ws, float* __restrict__ mean,
                                   float* __restrict__ var, int C, double count) {
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < C) {
        const double m = ws[2 * c] / count;
        double v = ws[2 * c + 1] / count - m * m;
        mean[c] = (float)m;
        var[c] = (float)(v > 0.0 ? v : 0.0);
    }
}

// ---------------------------------------------------------------------------
// out = act( BN_a(a) [+ BN_r(r)] ), written in place into `a`'s buffer.
// ---------------------------------------------------------------------------
__global__ void __launch_bounds__(256)
bn_apply_kernel(float* __restrict__ a,
                const float* __restrict__ mean_a, const float* __restrict__ var_a,
                const float* __restrict__ g_a, const float* __restrict__ b_a,
                const float* __restrict__ r,
                const float* __restrict__ mean_r, const float* __restrict__ var_r,
                const float* __restrict__ g_r, const float* __restrict__ b_r,
                int C, int64_t HW, int64_t total, float eps, bool relu) {
    for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < total;
         idx += (int64_t)gridDim.x * blockDim.x) {
        const int c = (int)((idx / HW) % C);
        float v = (a[idx] - __ldg(mean_a + c)) * rsqrtf(__ldg(var_a + c) + eps) * __ldg(g_a + c) + __ldg(b_a + c);
        if (r != nullptr) {
            v += (r[idx] - __ldg(mean_r + c)) * rsqrtf(__ldg(var_r + c) + eps) * __ldg(g_r + c) + __ldg(b_r + c);
        }
        if (relu) v = fmaxf(v, 0.0f);
        a[idx] = v;
    }
}

// ------------------------------ host wrappers ------------------------------
torch::Tensor conv2d_forward(torch::Tensor x, torch::Tensor w, int64_t stride, int64_t pad) {
    TORCH_CHECK(x.is_cuda() && w.is_cuda(), "CUDA tensors expected");
    TORCH_CHECK(x.scalar_type() == at::kFloat && w.scalar_type() == at::kFloat, "float32 expected");
    TORCH_CHECK(w.size(2) == w.size(3), "square kernels only");
    TORCH_CHECK(w.size(1) == x.size(1), "channel mismatch");
    const c10::cuda::CUDAGuard guard(x.device());
    auto xc = x.contiguous();
    auto wc = w.contiguous();
    const int N = xc.size(0), C = xc.size(1), H = xc.size(2), W = xc.size(3);
    const int OC = wc.size(0), K = wc.size(2);
    const int Ho = (H + 2 * (int)pad - K) / (int)stride + 1;
    const int Wo = (W + 2 * (int)pad - K) / (int)stride + 1;
    auto y = torch::empty({N, OC, Ho, Wo}, xc.options());
    if (y.numel() == 0) return y;

    const int tiles_x = (Wo + CONV_TILE - 1) / CONV_TILE;
    const int tiles_y = (Ho + CONV_TILE - 1) / CONV_TILE;
    const int P = (CONV_TILE - 1) * (int)stride + K;
    const size_t smem = sizeof(float) * (P * P + CONV_OCT * K * K);
    if (smem > 48 * 1024) {
        C10_CUDA_CHECK(cudaFuncSetAttribute(conv2d_direct_kernel,
                                            cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    }
    dim3 grid(tiles_x * tiles_y, (OC + CONV_OCT - 1) / CONV_OCT, N);
    dim3 block(CONV_TILE, CONV_TILE);
    conv2d_direct_kernel<<<grid, block, smem, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), wc.data_ptr<float>(), y.data_ptr<float>(),
        C, H, W, OC, K, (int)stride, (int)pad, Ho, Wo, tiles_x);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}

std::vector<torch::Tensor> bn_batch_stats(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.dim() == 4 && x.is_contiguous(), "contiguous NCHW CUDA tensor expected");
    const c10::cuda::CUDAGuard guard(x.device());
    const int N = x.size(0), C = x.size(1);
    const int64_t HW = x.size(2) * x.size(3);
    auto ws = torch::zeros({C, 2}, x.options().dtype(at::kDouble));
    auto mean = torch::empty({C}, x.options());
    auto var = torch::empty({C}, x.options());
    auto stream = at::cuda::getCurrentCUDAStream();
    bn_partial_stats_kernel<<<dim3(C, STAT_SPLIT), STAT_THREADS, 0, stream>>>(
        x.data_ptr<float>(), ws.data_ptr<double>(), N, C, HW);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    bn_finalize_kernel<<<(C + 127) / 128, 128, 0, stream>>>(
        ws.data_ptr<double>(), mean.data_ptr<float>(), var.data_ptr<float>(), C, (double)N * HW);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return {mean, var};
}

static void launch_apply(torch::Tensor a, torch::Tensor mean_a, torch::Tensor var_a,
                         torch::Tensor g_a, torch::Tensor b_a, const float* r,
                         const float* mr, const float* vr, const float* gr, const float* br,
                         double eps, bool relu) {
    const int C = a.size(1);
    const int64_t HW = a.size(2) * a.size(3);
    const int64_t total = a.numel();
    const int threads = 256;
    const int blocks = (int)std::min<int64_t>((total + threads - 1) / threads, 8192);
    bn_apply_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        a.data_ptr<float>(), mean_a.data_ptr<float>(), var_a.data_ptr<float>(),
        g_a.data_ptr<float>(), b_a.data_ptr<float>(), r, mr, vr, gr, br,
        C, HW, total, (float)eps, relu);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
}

// in place: a <- act(BN(a))
torch::Tensor bn_act_(torch::Tensor a, torch::Tensor mean, torch::Tensor var,
                      torch::Tensor gamma, torch::Tensor beta, double eps, bool relu) {
    TORCH_CHECK(a.is_contiguous(), "a must be contiguous");
    const c10::cuda::CUDAGuard guard(a.device());
    launch_apply(a, mean.contiguous(), var.contiguous(), gamma.contiguous(), beta.contiguous(),
                 nullptr, nullptr, nullptr, nullptr, nullptr, eps, relu);
    return a;
}

// in place: a <- relu(BN_a(a) + BN_r(r))
torch::Tensor bn_add_relu_(torch::Tensor a, torch::Tensor mean_a, torch::Tensor var_a,
                           torch::Tensor g_a, torch::Tensor b_a,
                           torch::Tensor r, torch::Tensor mean_r, torch::Tensor var_r,
                           torch::Tensor g_r, torch::Tensor b_r, double eps) {
    TORCH_CHECK(a.is_contiguous() && r.is_contiguous() && a.sizes() == r.sizes(), "shape mismatch");
    const c10::cuda::CUDAGuard guard(a.device());
    auto mr = mean_r.contiguous(), vr = var_r.contiguous(), gr = g_r.contiguous(), br = b_r.contiguous();
    launch_apply(a, mean_a.contiguous(), var_a.contiguous(), g_a.contiguous(), b_a.contiguous(),
                 r.data_ptr<float>(), mr.data_ptr<float>(), vr.data_ptr<float>(),
                 gr.data_ptr<float>(), br.data_ptr<float>(), eps, true);
    return a;
}
"""

resblock_cpp = r"""
#include <torch/extension.h>
#include <vector>
torch::Tensor conv2d_forward(torch::Tensor x, torch::Tensor w, int64_t stride, int64_t pad);
std::vector<torch::Tensor> bn_batch_stats(torch::Tensor x);
torch::Tensor bn_act_(torch::Tensor a, torch::Tensor mean, torch::Tensor var,
                      torch::Tensor gamma, torch::Tensor beta, double eps, bool relu);
torch::Tensor bn_add_relu_(torch::Tensor a, torch::Tensor mean_a, torch::Tensor var_a,
                           torch::Tensor g_a, torch::Tensor b_a,
                           torch::Tensor r, torch::Tensor mean_r, torch::Tensor var_r,
                           torch::Tensor g_r, torch::Tensor b_r, double eps);

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("conv2d_forward", &conv2d_forward, "direct conv2d (no bias)");
    m.def("bn_batch_stats", &bn_batch_stats, "per-channel batch mean / biased var");
    m.def("bn_act_", &bn_act_, "in-place batchnorm (+relu)");
    m.def("bn_add_relu_", &bn_add_relu_, "in-place relu(bn(a) + bn(r))");
}
"""

resblock_ext = load_inline(
    name="resnet_basic_block_cuda",
    cpp_sources=resblock_cpp,
    cuda_sources=resblock_cuda,
    extra_cuda_cflags=["-O3", "--use_fast_math"],
    verbose=False,
)


def _bn_stats(bn: nn.BatchNorm2d, t: torch.Tensor):
    """Statistics BatchNorm2d would normalise with, updating running stats like nn.BatchNorm2d."""
    if bn.training or bn.running_mean is None:
        mean, var = resblock_ext.bn_batch_stats(t)
        if bn.training and bn.track_running_stats:
            with torch.no_grad():
                bn.num_batches_tracked.add_(1)
                if bn.momentum is None:
                    m = 1.0 / float(bn.num_batches_tracked.item())
                else:
                    m = bn.momentum
                count = t.numel() / t.size(1)
                unbiased = var * (count / max(count - 1.0, 1.0))
                bn.running_mean.mul_(1.0 - m).add_(mean, alpha=m)
                bn.running_var.mul_(1.0 - m).add_(unbiased, alpha=m)
        return mean, var
    return bn.running_mean, bn.running_var


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

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        ds_conv, ds_bn = self.downsample[0], self.downsample[1]

        identity = resblock_ext.conv2d_forward(x, ds_conv.weight, self.stride, 0)
        mean_d, var_d = _bn_stats(ds_bn, identity)

        out = resblock_ext.conv2d_forward(x, self.conv1.weight, self.stride, 1)
        mean1, var1 = _bn_stats(self.bn1, out)
        out = resblock_ext.bn_act_(out, mean1, var1, self.bn1.weight, self.bn1.bias, self.bn1.eps, True)

        out = resblock_ext.conv2d_forward(out, self.conv2.weight, 1, 1)
        mean2, var2 = _bn_stats(self.bn2, out)
        return resblock_ext.bn_add_relu_(out, mean2, var2, self.bn2.weight, self.bn2.bias,
                                         identity, mean_d, var_d, ds_bn.weight, ds_bn.bias,
                                         self.bn2.eps)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, stride]


if __name__ == "__main__":
    torch.manual_seed(0)
    from copy import deepcopy
    new = ModelNew(in_channels, out_channels, stride).cuda()
    x = torch.randn(2, in_channels, 64, 64, device="cuda")
    with torch.no_grad():
        m2 = deepcopy(new)
        idn = m2.downsample(x)
        o = m2.relu(m2.bn1(m2.conv1(x)))
        o = m2.bn2(m2.conv2(o))
        expected = torch.relu(o + idn)
    got = new(x)
    print("max abs diff:", (got - expected).abs().max().item())
