# corpus: problem=kb_l1_033_batchnorm device=cuda expect=accepted policy=kernelbench
# style: self.op alias; always training-mode BatchNorm (batch statistics), as KernelBench runs Model and ModelNew (never eval()); host code updates running statistics
# class: 1,3
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

bn_ext_cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

// Per-channel sum and sum of squares over N, H, W: one block per channel.
__global__ void channel_stats_kernel(const float* __restrict__ x, float* __restrict__ mean, float* __restrict__ var,
                                     int N, int C, int64_t HW) {
    const int c = blockIdx.x;
    double s = 0.0, ss = 0.0;
    for (int n = 0; n < N; ++n) {
        const float* plane = x + ((int64_t)n * C + c) * HW;
        for (int64_t i = threadIdx.x; i < HW; i += blockDim.x) {
            float v = plane[i];
            s += v;
            ss += (double)v * v;
        }
    }
    __shared__ double sh_s[256];
    __shared__ double sh_ss[256];
    sh_s[threadIdx.x] = s;
    sh_ss[threadIdx.x] = ss;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) {
            sh_s[threadIdx.x] += sh_s[threadIdx.x + stride];
            sh_ss[threadIdx.x] += sh_ss[threadIdx.x + stride];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        const double count = (double)N * HW;
        const double m = sh_s[0] / count;
        mean[c] = (float)m;
        var[c] = (float)(sh_ss[0] / count - m * m);
    }
}

__global__ void bn_apply_kernel(const float* __restrict__ x, float* __restrict__ y, const float* __restrict__ mean,
                                const float* __restrict__ invstd, const float* __restrict__ w, const float* __restrict__ b,
                                int C, int64_t HW, int64_t total) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
        const int c = (int)((i / HW) % C);
        y[i] = (x[i] - mean[c]) * invstd[c] * w[c] + b[c];
    }
}

torch::Tensor bn_apply(torch::Tensor x, torch::Tensor mean, torch::Tensor invstd, torch::Tensor weight, torch::Tensor bias) {
    TORCH_CHECK(x.is_cuda() && x.dim() == 4, "x must be a 4D CUDA tensor");
    x = x.contiguous();
    auto y = torch::empty_like(x);
    const int C = x.size(1);
    const int64_t HW = x.size(2) * x.size(3);
    const int64_t total = x.numel();
    const int blocks = (int)std::min<int64_t>((total + 255) / 256, 65535);
    bn_apply_kernel<<<blocks, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), mean.contiguous().data_ptr<float>(),
                                     invstd.contiguous().data_ptr<float>(), weight.contiguous().data_ptr<float>(),
                                     bias.contiguous().data_ptr<float>(), C, HW, total);
    return y;
}

// Training-mode BatchNorm2d: batch statistics from the kernel; the running statistics are updated with ATen ops,
// as nn.BatchNorm2d does (unbiased variance into running_var).
torch::Tensor bn_forward_train(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, torch::Tensor running_mean,
                               torch::Tensor running_var, double momentum, double eps) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    x = x.contiguous();
    const int N = x.size(0), C = x.size(1);
    const int64_t HW = x.size(2) * x.size(3);
    auto mean = torch::empty({C}, x.options());
    auto var = torch::empty({C}, x.options());
    channel_stats_kernel<<<C, 256>>>(x.data_ptr<float>(), mean.data_ptr<float>(), var.data_ptr<float>(), N, C, HW);
    const double count = (double)N * HW;
    {
        torch::NoGradGuard no_grad;
        running_mean.mul_(1.0 - momentum).add_(mean, momentum);
        running_var.mul_(1.0 - momentum).add_(var * (count / (count - 1.0)), momentum);
    }
    auto invstd = torch::rsqrt(var + eps);
    return bn_apply(x, mean, invstd, weight, bias);
}
"""

bn_ext_cpp_source = """
torch::Tensor bn_forward_train(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, torch::Tensor running_mean,
                               torch::Tensor running_var, double momentum, double eps);
torch::Tensor bn_apply(torch::Tensor x, torch::Tensor mean, torch::Tensor invstd, torch::Tensor weight, torch::Tensor bias);
"""

bn_ext = load_inline(
    name="batchnorm2d_train_ext",
    cpp_sources=bn_ext_cpp_source,
    cuda_sources=bn_ext_cuda_source,
    functions=['bn_forward_train', 'bn_apply'],
    verbose=True,
    extra_cuda_cflags=["-O3", "--use_fast_math"],
)

class ModelNew(nn.Module):
    def __init__(self, num_features):
        super().__init__()
        self.bn = nn.BatchNorm2d(num_features)
        self.bn_train = bn_ext.bn_forward_train

    def forward(self, x):
        return self.bn_train(x, self.bn.weight, self.bn.bias, self.bn.running_mean, self.bn.running_var,
                             self.bn.momentum, self.bn.eps)
