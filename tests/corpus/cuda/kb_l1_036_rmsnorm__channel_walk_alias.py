# corpus: problem=kb_l1_036_rmsnorm device=cuda expect=accepted policy=both
# style: self.op alias with a scalar argument
# class: 1,6
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

rms_cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

#define CHECK_INPUT(x) TORCH_CHECK(x.is_cuda() && x.is_contiguous(), #x " must be a contiguous CUDA tensor")

// x is (B, C, *spatial); each thread owns one (b, s) position and walks the C channels (stride = spatial size),
// so neighbouring threads read neighbouring addresses.
__global__ void rms_norm_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t B, int C, int64_t S, float eps) {
    const int64_t total = B * S;
    for (int64_t p = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; p < total; p += (int64_t)gridDim.x * blockDim.x) {
        const int64_t b = p / S, s = p % S;
        const float* xp = x + b * C * S + s;
        float* yp = y + b * C * S + s;
        float acc = 0.0f;
        for (int c = 0; c < C; ++c) {
            const float v = xp[(int64_t)c * S];
            acc += v * v;
        }
        const float inv = rsqrtf(acc / C + eps);
        for (int c = 0; c < C; ++c) yp[(int64_t)c * S] = xp[(int64_t)c * S] * inv;
    }
}

torch::Tensor rms_norm_cuda(torch::Tensor x, double eps) {
    CHECK_INPUT(x);
    TORCH_CHECK(x.dim() >= 2, "x must have a channel dimension");
    auto y = torch::empty_like(x);
    const int64_t B = x.size(0);
    const int C = x.size(1);
    const int64_t S = x.numel() / (B * C);
    const int threads = 256;
    const int blocks = (int)std::min<int64_t>((B * S + threads - 1) / threads, 65535);
    rms_norm_kernel<<<blocks, threads>>>(x.data_ptr<float>(), y.data_ptr<float>(), B, C, S, (float)eps);
    cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "rms_norm_kernel failed: ", cudaGetErrorString(err));
    return y;
}
"""

rms_cpp_source = """
torch::Tensor rms_norm_cuda(torch::Tensor x, double eps);
"""

rms = load_inline(
    name="rms_norm_ext",
    cpp_sources=rms_cpp_source,
    cuda_sources=rms_cuda_source,
    functions=['rms_norm_cuda'],
    verbose=True,
    extra_cuda_cflags=["-O3", "--use_fast_math"],
)

class ModelNew(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.rms_norm = rms.rms_norm_cuda

    def forward(self, x):
        return self.rms_norm(x, self.eps)
