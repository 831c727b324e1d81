# corpus: problem=kb_l1_033_batchnorm device=cuda expect=accepted policy=both
# style: functions=[...] binding two kernels (statistics, apply), running stats updated, num_batches_tracked += 1
# class: 6
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Two kernels, both bound automatically through functions=[...]:
#   bn_stats : per-channel batch mean / biased variance (two-pass, one block per channel),
#              also updates the running statistics in place (momentum blend, unbiased var).
#   bn_apply : y = (x - mean[c]) * rsqrt(var[c] + eps) * w[c] + b[c], grid-stride elementwise.

cuda_source = r"""
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#define WARP 32

__inline__ __device__ float warp_sum(float v) {
#pragma unroll
    for (int off = WARP / 2; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffff, v, off);
    return v;
}

// Sum over the block; valid result in all threads.
__inline__ __device__ float block_sum(float v) {
    __shared__ float shared[32];
    __shared__ float total;
    const int lane = threadIdx.x % WARP;
    const int wid = threadIdx.x / WARP;
    v = warp_sum(v);
    if (lane == 0) shared[wid] = v;
    __syncthreads();
    if (wid == 0) {
        float t = (lane < (blockDim.x + WARP - 1) / WARP) ? shared[lane] : 0.0f;
        t = warp_sum(t);
        if (lane == 0) total = t;
    }
    __syncthreads();
    float r = total;
    __syncthreads();
    return r;
}

__global__ void bn_stats_kernel(const float* __restrict__ x,
                                float* __restrict__ mean_out,
                                float* __restrict__ var_out,
                                float* __restrict__ running_mean,
                                float* __restrict__ running_var,
                                int N, int C, int64_t HW, float momentum) {
    const int c = blockIdx.x;
    const int64_t count = (int64_t)N * HW;

    float s = 0.0f;
    for (int n = 0; n < N; ++n) {
        const float* xp = x + ((int64_t)n * C + c) * HW;
        for (int64_t i = threadIdx.x; i < HW; i += blockDim.x) s += xp[i];
    }
    const float mean = block_sum(s) / (float)count;

    float sq = 0.0f;
    for (int n = 0; n < N; ++n) {
        const float* xp = x + ((int64_t)n * C + c) * HW;
        for (int64_t i = threadIdx.x; i < HW; i += blockDim.x) {
            const float d = xp[i] - mean;
            sq += d * d;
        }
    }
    const float m2 = block_sum(sq);

    if (threadIdx.x == 0) {
        const float var = m2 / (float)count;
        mean_out[c] = mean;
        var_out[c] = var;
        if (running_mean != nullptr) {
            const float unbiased = count > 1 ? m2 / (float)(count - 1) : var;
            running_mean[c] = (1.0f - momentum) * running_mean[c] + momentum * mean;
            running_var[c] = (1.0f - momentum) * running_var[c] + momentum * unbiased;
        }
    }
}

__global__ void bn_apply_kernel(const float* __restrict__ x,
                                float* __restrict__ y,
                                const float* __restrict__ mean,
                                const float* __restrict__ var,
                                const float* __restrict__ weight,
                                const float* __restrict__ bias,
                                int C, int64_t HW, int64_t total, float eps) {
    for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < total;
         idx += (int64_t)blockDim.x * gridDim.x) {
        const int c = (int)((idx / HW) % C);
        float v = (x[idx] - mean[c]) * rsqrtf(var[c] + eps);
        if (weight != nullptr) v *= weight[c];
        if (bias != nullptr) v += bias[c];
        y[idx] = v;
    }
}

static void check_input(const torch::Tensor& x) {
    TORCH_CHECK(x.is_cuda(), "x must be CUDA");
    TORCH_CHECK(x.scalar_type() == at::kFloat, "x must be float32");
    TORCH_CHECK(x.dim() >= 2, "x must be (N, C, ...)");
}

std::vector<torch::Tensor> bn_stats(torch::Tensor x,
                                    c10::optional<torch::Tensor> running_mean,
                                    c10::optional<torch::Tensor> running_var,
                                    double momentum) {
    check_input(x);
    const c10::cuda::CUDAGuard guard(x.device());
    x = x.contiguous();
    const int N = (int)x.size(0);
    const int C = (int)x.size(1);
    const int64_t HW = N * C == 0 ? 0 : x.numel() / ((int64_t)N * C);
    TORCH_CHECK((int64_t)N * HW > 0, "batch norm needs at least one value per channel");
    auto mean = torch::empty({C}, x.options());
    auto var = torch::empty({C}, x.options());
    float* rm = nullptr;
    float* rv = nullptr;
    if (running_mean.has_value() && running_mean->defined()) {
        TORCH_CHECK(running_var.has_value() && running_var->defined(), "running_var missing");
        TORCH_CHECK(running_mean->is_contiguous() && running_var->is_contiguous(), "running stats must be contiguous");
        TORCH_CHECK(running_mean->scalar_type() == at::kFloat && running_var->scalar_type() == at::kFloat,
                    "running stats must be float32");
        rm = running_mean->data_ptr<float>();
        rv = running_var->data_ptr<float>();
    }
    bn_stats_kernel<<<C, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), mean.data_ptr<float>(), var.data_ptr<float>(), rm, rv,
        N, C, HW, (float)momentum);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return {mean, var};
}

torch::Tensor bn_apply(torch::Tensor x, torch::Tensor mean, torch::Tensor var,
                       c10::optional<torch::Tensor> weight, c10::optional<torch::Tensor> bias,
                       double eps) {
    check_input(x);
    const c10::cuda::CUDAGuard guard(x.device());
    x = x.contiguous();
    mean = mean.contiguous().to(at::kFloat);
    var = var.contiguous().to(at::kFloat);
    const int C = (int)x.size(1);
    TORCH_CHECK(mean.numel() == C && var.numel() == C, "stat size mismatch");
    const float* w = nullptr;
    const float* b = nullptr;
    torch::Tensor wc, bc;
    if (weight.has_value() && weight->defined()) { wc = weight->contiguous(); w = wc.data_ptr<float>(); }
    if (bias.has_value() && bias->defined()) { bc = bias->contiguous(); b = bc.data_ptr<float>(); }

    auto y = torch::empty_like(x);
    const int64_t total = x.numel();
    if (total == 0) return y;
    const int64_t HW = total / ((int64_t)x.size(0) * C);
    const int threads = 256;
    const int max_blocks = at::cuda::getCurrentDeviceProperties()->multiProcessorCount * 8;
    const int blocks = (int)std::min<int64_t>((total + threads - 1) / threads, max_blocks);
    bn_apply_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), mean.data_ptr<float>(), var.data_ptr<float>(),
        w, b, C, HW, total, (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = r"""
std::vector<torch::Tensor> bn_stats(torch::Tensor x, c10::optional<torch::Tensor> running_mean,
                                    c10::optional<torch::Tensor> running_var, double momentum);
torch::Tensor bn_apply(torch::Tensor x, torch::Tensor mean, torch::Tensor var,
                       c10::optional<torch::Tensor> weight, c10::optional<torch::Tensor> bias, double eps);
"""

bn_cuda = load_inline(
    name="kb_l1_033_batchnorm__twokernels",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["bn_stats", "bn_apply"],
    extra_cuda_cflags=["-O3", "--use_fast_math"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, num_features: int):
        super().__init__()
        # keep the reference's BatchNorm2d for its parameters and running buffers
        self.bn = nn.BatchNorm2d(num_features=num_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        bn = self.bn
        use_batch_stats = self.training or bn.running_mean is None
        if use_batch_stats:
            update = self.training and bn.track_running_stats and bn.running_mean is not None
            factor = 0.0
            if update:
                bn.num_batches_tracked += 1
                factor = (1.0 / float(bn.num_batches_tracked)) if bn.momentum is None else bn.momentum
            mean, var = bn_cuda.bn_stats(
                x,
                bn.running_mean if update else None,
                bn.running_var if update else None,
                factor,
            )
        else:
            mean, var = bn.running_mean, bn.running_var
        return bn_cuda.bn_apply(x, mean, var, bn.weight, bn.bias, bn.eps)
