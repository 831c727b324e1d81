# corpus: problem=kb_l2_017_conv2d_instancenorm_divide device=cuda expect=accepted policy=kernelbench
# style: cuDNN conv + block-per-plane two-pass instance norm fused with the division
# class: 6
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

inorm_cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

// One block per (n, c) plane: mean, then variance around it (two passes over the plane), then the output.
__global__ void instance_norm_div_kernel(const float* __restrict__ x, float* __restrict__ y, int HW, float eps, float inv_div) {
    const float* p = x + (int64_t)blockIdx.x * HW;
    float* q = y + (int64_t)blockIdx.x * HW;
    __shared__ float red[32];
    __shared__ float mean_s, rstd_s;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;

    float s = 0.0f;
    for (int i = threadIdx.x; i < HW; i += blockDim.x) s += p[i];
    for (int o = 16; o; o >>= 1) s += __shfl_down_sync(0xffffffff, s, o);
    if (lane == 0) red[warp] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        float t = 0.0f;
        for (int w = 0; w < nwarps; ++w) t += red[w];
        mean_s = t / HW;
    }
    __syncthreads();
    const float mean = mean_s;
    float v = 0.0f;
    for (int i = threadIdx.x; i < HW; i += blockDim.x) { const float d = p[i] - mean; v += d * d; }
    for (int o = 16; o; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
    __syncthreads();
    if (lane == 0) red[warp] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
        float t = 0.0f;
        for (int w = 0; w < nwarps; ++w) t += red[w];
        rstd_s = rsqrtf(t / HW + eps);
    }
    __syncthreads();
    const float scale = rstd_s * inv_div;
    for (int i = threadIdx.x; i < HW; i += blockDim.x) q[i] = (p[i] - mean) * scale;
}

torch::Tensor instance_norm_divide(torch::Tensor x, double eps, double divisor) {
    TORCH_CHECK(x.is_cuda() && x.dim() == 4, "NCHW CUDA tensor");
    x = x.contiguous();
    auto y = torch::empty_like(x);
    const int64_t planes = x.size(0) * x.size(1);
    const int HW = x.size(2) * x.size(3);
    instance_norm_div_kernel<<<(unsigned int)planes, 512>>>(x.data_ptr<float>(), y.data_ptr<float>(), HW, (float)eps,
                                                            (float)(1.0 / divisor));
    cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "instance_norm_div_kernel: ", cudaGetErrorString(err));
    return y;
}
"""

inorm_cpp_source = """
torch::Tensor instance_norm_divide(torch::Tensor x, double eps, double divisor);
"""

inorm = load_inline(
    name="instance_norm_divide_ext",
    cpp_sources=inorm_cpp_source,
    cuda_sources=inorm_cuda_source,
    functions=['instance_norm_divide'],
    verbose=True,
    extra_cuda_cflags=["-O3", "--use_fast_math"],
)

class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, divide_by):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.instance_norm = nn.InstanceNorm2d(out_channels)
        self.divide_by = divide_by

    def forward(self, x):
        x = self.conv(x)
        return inorm.instance_norm_divide(x, self.instance_norm.eps, self.divide_by)
