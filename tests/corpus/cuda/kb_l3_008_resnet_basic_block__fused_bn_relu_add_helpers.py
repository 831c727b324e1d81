# corpus: problem=kb_l3_008_resnet_basic_block device=cuda expect=accepted policy=kernelbench
# style: convs left to F.conv2d; batch-statistics kernel with __shfl_xor_sync in double updating the running stats; BN+ReLU and BN+BN+add+ReLU kernels with float4; _ext = None lazy loader; _bn_statistics helper steps num_batches_tracked.add_(1) (blind round 8)
# class: 2, 3
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

# ResNet basic block. The three convolutions stay on cuDNN (F.conv2d with the module's weights); everything
# after them runs in custom kernels:
#   bn_stats        : per-channel batch mean / biased var (training mode) + running-stat update, in double
#   bn_relu         : out = relu(bn1(conv1(x)))                                   (one pass, float4)
#   bn_add_bn_relu  : out = relu(bn2(conv2(.)) + bn_ds(conv_ds(x)))                (one pass, float4)
# In eval mode the kernels are fed the running statistics instead, exactly like nn.BatchNorm2d.

resblock_cuda_src = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#define CUDA_CHECK_LAUNCH()                                                          \
    do {                                                                             \
        cudaError_t e = cudaGetLastError();                                          \
        TORCH_CHECK(e == cudaSuccess, "CUDA kernel launch failed: ", cudaGetErrorString(e)); \
    } while (0)

constexpr int kStatThreads = 512;

__device__ __forceinline__ double warp_sum(double v) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffff, v, off);
    return v;
}

// One block per channel. mean_var: [2, C] -> (mean, biased var). Optionally updates running stats.
__global__ void __launch_bounds__(kStatThreads)
bn_stats_kernel(const float* __restrict__ x, float* __restrict__ mean_var,
                float* __restrict__ running_mean, float* __restrict__ running_var,
                int N, int C, int HW, float momentum) {
    const int c = blockIdx.x;
    const long long count = (long long)N * HW;
    double s = 0.0, ss = 0.0;
    for (long long i = threadIdx.x; i < count; i += blockDim.x) {
        const long long n = i / HW;
        const long long hw = i - n * HW;
        const double v = (double)__ldg(x + (n * C + c) * (long long)HW + hw);
        s += v;
        ss += v * v;
    }
    __shared__ double sh_s[kStatThreads / 32], sh_ss[kStatThreads / 32];
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    s = warp_sum(s);
    ss = warp_sum(ss);
    if (lane == 0) { sh_s[wid] = s; sh_ss[wid] = ss; }
    __syncthreads();
    if (wid == 0) {
        s = lane < (int)(blockDim.x / 32) ? sh_s[lane] : 0.0;
        ss = lane < (int)(blockDim.x / 32) ? sh_ss[lane] : 0.0;
        s = warp_sum(s);
        ss = warp_sum(ss);
        if (lane == 0) {
            const double mean = s / (double)count;
            double var = ss / (double)count - mean * mean;
            var = var < 0.0 ? 0.0 : var;
            mean_var[c] = (float)mean;
            mean_var[C + c] = (float)var;
            if (running_mean != nullptr) {
                const double unbiased = count > 1 ? var * (double)count / (double)(count - 1) : var;
                running_mean[c] = (float)((1.0 - momentum) * running_mean[c] + momentum * mean);
                running_var[c] = (float)((1.0 - momentum) * running_var[c] + momentum * unbiased);
            }
        }
    }
}

// y = relu(gamma * (x - mean) * rsqrt(var + eps) + beta), NCHW, HW % 4 == 0 path uses float4.
template <bool VEC4>
__global__ void bn_relu_kernel(const float* __restrict__ x, float* __restrict__ y,
                               const float* __restrict__ mean, const float* __restrict__ var,
                               const float* __restrict__ gamma, const float* __restrict__ beta,
                               float eps, int C, int HW, long long total) {
    const long long stride = (long long)blockDim.x * gridDim.x;
    if (VEC4) {
        const long long total4 = total / 4;
        const float4* x4 = reinterpret_cast<const float4*>(x);
        float4* y4 = reinterpret_cast<float4*>(y);
        for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total4; i += stride) {
            const int c = (int)(((i * 4) / HW) % C);
            const float sc = __ldg(gamma + c) * rsqrtf(__ldg(var + c) + eps);
            const float sh = __ldg(beta + c) - __ldg(mean + c) * sc;
            float4 v = __ldg(x4 + i);
            v.x = fmaxf(fmaf(v.x, sc, sh), 0.f);
            v.y = fmaxf(fmaf(v.y, sc, sh), 0.f);
            v.z = fmaxf(fmaf(v.z, sc, sh), 0.f);
            v.w = fmaxf(fmaf(v.w, sc, sh), 0.f);
            y4[i] = v;
        }
    } else {
        for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += stride) {
            const int c = (int)((i / HW) % C);
            const float sc = __ldg(gamma + c) * rsqrtf(__ldg(var + c) + eps);
            const float sh = __ldg(beta + c) - __ldg(mean + c) * sc;
            y[i] = fmaxf(fmaf(__ldg(x + i), sc, sh), 0.f);
        }
    }
}

// y = relu(bn_a(a) + bn_b(b))
template <bool VEC4>
__global__ void bn_add_bn_relu_kernel(const float* __restrict__ a, const float* __restrict__ b,
                                      float* __restrict__ y,
                                      const float* __restrict__ mean_a, const float* __restrict__ var_a,
                                      const float* __restrict__ gamma_a, const float* __restrict__ beta_a,
                                      const float* __restrict__ mean_b, const float* __restrict__ var_b,
                                      const float* __restrict__ gamma_b, const float* __restrict__ beta_b,
                                      float eps_a, float eps_b, int C, int HW, long long total) {
    const long long stride = (long long)blockDim.x * gridDim.x;
    const long long step = VEC4 ? 4 : 1;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i * step < total; i += stride) {
        const int c = (int)(((i * step) / HW) % C);
        const float sa = __ldg(gamma_a + c) * rsqrtf(__ldg(var_a + c) + eps_a);
        const float ha = __ldg(beta_a + c) - __ldg(mean_a + c) * sa;
        const float sb = __ldg(gamma_b + c) * rsqrtf(__ldg(var_b + c) + eps_b);
        const float hb = __ldg(beta_b + c) - __ldg(mean_b + c) * sb;
        if (VEC4) {
            const float4 va = __ldg(reinterpret_cast<const float4*>(a) + i);
            const float4 vb = __ldg(reinterpret_cast<const float4*>(b) + i);
            float4 r;
            r.x = fmaxf(fmaf(va.x, sa, ha) + fmaf(vb.x, sb, hb), 0.f);
            r.y = fmaxf(fmaf(va.y, sa, ha) + fmaf(vb.y, sb, hb), 0.f);
            r.z = fmaxf(fmaf(va.z, sa, ha) + fmaf(vb.z, sb, hb), 0.f);
            r.w = fmaxf(fmaf(va.w, sa, ha) + fmaf(vb.w, sb, hb), 0.f);
            reinterpret_cast<float4*>(y)[i] = r;
        } else {
            y[i] = fmaxf(fmaf(__ldg(a + i), sa, ha) + fmaf(__ldg(b + i), sb, hb), 0.f);
        }
    }
}

static void check_nchw(const torch::Tensor& t, const char* name) {
    TORCH_CHECK(t.is_cuda(), name, " must be a CUDA tensor");
    TORCH_CHECK(t.dim() == 4, name, " must be NCHW");
    TORCH_CHECK(t.scalar_type() == at::kFloat, name, " must be float32");
    TORCH_CHECK(t.is_contiguous(), name, " must be contiguous");
}

static int blocks_for(long long work) {
    long long b = (work + 255) / 256;
    return (int)std::min<long long>(std::max<long long>(b, 1), 65535LL * 8);
}

// Returns [2, C] (mean, biased var). If running stats are given they are updated in place.
torch::Tensor bn_stats(torch::Tensor x, c10::optional<torch::Tensor> running_mean,
                       c10::optional<torch::Tensor> running_var, double momentum) {
    check_nchw(x, "x");
    const c10::cuda::CUDAGuard guard(x.device());
    const int N = x.size(0), C = x.size(1), HW = x.size(2) * x.size(3);
    auto mean_var = torch::empty({2, C}, x.options());
    float* rm = nullptr;
    float* rv = nullptr;
    if (running_mean.has_value() && running_mean->defined()) {
        TORCH_CHECK(running_var.has_value() && running_var->defined(), "running_var missing");
        TORCH_CHECK(running_mean->is_contiguous() && running_var->is_contiguous(), "running stats must be contiguous");
        rm = running_mean->data_ptr<float>();
        rv = running_var->data_ptr<float>();
    }
    bn_stats_kernel<<<C, kStatThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), mean_var.data_ptr<float>(), rm, rv, N, C, HW, (float)momentum);
    CUDA_CHECK_LAUNCH();
    return mean_var;
}

torch::Tensor bn_relu(torch::Tensor x, torch::Tensor mean, torch::Tensor var,
                      torch::Tensor gamma, torch::Tensor beta, double eps) {
    check_nchw(x, "x");
    const c10::cuda::CUDAGuard guard(x.device());
    const int C = x.size(1), HW = x.size(2) * x.size(3);
    auto y = torch::empty_like(x);
    const long long total = x.numel();
    if (total == 0) return y;
    auto stream = at::cuda::getCurrentCUDAStream();
    if (HW % 4 == 0) {
        bn_relu_kernel<true><<<blocks_for(total / 4), 256, 0, stream>>>(
            x.data_ptr<float>(), y.data_ptr<float>(), mean.data_ptr<float>(), var.data_ptr<float>(),
            gamma.data_ptr<float>(), beta.data_ptr<float>(), (float)eps, C, HW, total);
    } else {
        bn_relu_kernel<false><<<blocks_for(total), 256, 0, stream>>>(
            x.data_ptr<float>(), y.data_ptr<float>(), mean.data_ptr<float>(), var.data_ptr<float>(),
            gamma.data_ptr<float>(), beta.data_ptr<float>(), (float)eps, C, HW, total);
    }
    CUDA_CHECK_LAUNCH();
    return y;
}

torch::Tensor bn_add_bn_relu(torch::Tensor a, torch::Tensor mean_a, torch::Tensor var_a,
                             torch::Tensor gamma_a, torch::Tensor beta_a, double eps_a,
                             torch::Tensor b, torch::Tensor mean_b, torch::Tensor var_b,
                             torch::Tensor gamma_b, torch::Tensor beta_b, double eps_b) {
    check_nchw(a, "a");
    check_nchw(b, "b");
    TORCH_CHECK(a.sizes() == b.sizes(), "residual branch shape mismatch");
    const c10::cuda::CUDAGuard guard(a.device());
    const int C = a.size(1), HW = a.size(2) * a.size(3);
    auto y = torch::empty_like(a);
    const long long total = a.numel();
    if (total == 0) return y;
    auto stream = at::cuda::getCurrentCUDAStream();
#define ARGS a.data_ptr<float>(), b.data_ptr<float>(), y.data_ptr<float>(),                      \
             mean_a.data_ptr<float>(), var_a.data_ptr<float>(), gamma_a.data_ptr<float>(), beta_a.data_ptr<float>(), \
             mean_b.data_ptr<float>(), var_b.data_ptr<float>(), gamma_b.data_ptr<float>(), beta_b.data_ptr<float>(), \
             (float)eps_a, (float)eps_b, C, HW, total
    if (HW % 4 == 0) bn_add_bn_relu_kernel<true><<<blocks_for(total / 4), 256, 0, stream>>>(ARGS);
    else             bn_add_bn_relu_kernel<false><<<blocks_for(total), 256, 0, stream>>>(ARGS);
#undef ARGS
    CUDA_CHECK_LAUNCH();
    return y;
}
"""

resblock_cpp_src = r"""
torch::Tensor bn_stats(torch::Tensor x, c10::optional<torch::Tensor> running_mean,
                       c10::optional<torch::Tensor> running_var, double momentum);
torch::Tensor bn_relu(torch::Tensor x, torch::Tensor mean, torch::Tensor var,
                      torch::Tensor gamma, torch::Tensor beta, double eps);
torch::Tensor bn_add_bn_relu(torch::Tensor a, torch::Tensor mean_a, torch::Tensor var_a,
                             torch::Tensor gamma_a, torch::Tensor beta_a, double eps_a,
                             torch::Tensor b, torch::Tensor mean_b, torch::Tensor var_b,
                             torch::Tensor gamma_b, torch::Tensor beta_b, double eps_b);
"""

_ext = None


def _get_ext():
    global _ext
    if _ext is None:
        _ext = load_inline(
            name="resnet_basic_block_fused_bn",
            cpp_sources=resblock_cpp_src,
            cuda_sources=resblock_cuda_src,
            functions=["bn_stats", "bn_relu", "bn_add_bn_relu"],
            extra_cuda_cflags=["-O3"],
            verbose=False,
        )
    return _ext


def _bn_statistics(bn: nn.BatchNorm2d, x: torch.Tensor):
    """(mean, var) that nn.BatchNorm2d would normalize with, updating running stats like it does."""
    use_batch_stats = bn.training or bn.running_mean is None
    if not use_batch_stats:
        return bn.running_mean, bn.running_var
    update = bn.training and bn.track_running_stats and bn.running_mean is not None
    momentum = 0.0
    if update:
        bn.num_batches_tracked.add_(1)
        momentum = bn.momentum if bn.momentum is not None else 1.0 / float(bn.num_batches_tracked)
    mv = _get_ext().bn_stats(x, bn.running_mean if update else None, bn.running_var if update else None, momentum)
    return mv[0], mv[1]


class ModelNew(nn.Module):
    expansion = 1

    def __init__(self, in_channels: int, out_channels: int, stride: int = 1):
        super().__init__()
        # Identical submodules / creation order to the reference (same seeded init, same state_dict keys).
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
        ext = _get_ext()
        ds_conv, ds_bn = self.downsample[0], self.downsample[1]

        identity = F.conv2d(x, ds_conv.weight, None, ds_conv.stride, ds_conv.padding).contiguous()
        id_mean, id_var = _bn_statistics(ds_bn, identity)

        out = F.conv2d(x, self.conv1.weight, None, self.conv1.stride, self.conv1.padding).contiguous()
        m1, v1 = _bn_statistics(self.bn1, out)
        out = ext.bn_relu(out, m1, v1, self.bn1.weight, self.bn1.bias, self.bn1.eps)

        out = F.conv2d(out, self.conv2.weight, None, self.conv2.stride, self.conv2.padding).contiguous()
        m2, v2 = _bn_statistics(self.bn2, out)
        return ext.bn_add_bn_relu(out, m2, v2, self.bn2.weight, self.bn2.bias, self.bn2.eps,
                                  identity, id_mean, id_var, ds_bn.weight, ds_bn.bias, ds_bn.eps)
