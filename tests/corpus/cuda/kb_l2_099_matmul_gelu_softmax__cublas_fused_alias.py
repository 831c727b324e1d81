# corpus: problem=kb_l2_099_matmul_gelu_softmax device=cuda expect=accepted policy=kernelbench
# style: self alias of the fused row kernel
# class: 1,6
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

gs_cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__device__ __forceinline__ float gelu_erf(float v) { return 0.5f * v * (1.0f + erff(v * 0.7071067811865476f)); }

__device__ float block_max(float v, float* sh) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, o));
    if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;
    __syncthreads();
    v = sh[0];
    for (int w = 1; w < blockDim.x / 32; ++w) v = fmaxf(v, sh[w]);
    __syncthreads();
    return v;
}

__device__ float block_sum(float v, float* sh) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
    if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;
    __syncthreads();
    v = 0.0f;
    for (int w = 0; w < blockDim.x / 32; ++w) v += sh[w];
    __syncthreads();
    return v;
}

// softmax(gelu(x)) along each row; one block of 256 threads per row, gelu recomputed in each pass.
__global__ void gelu_softmax_kernel(const float* __restrict__ x, float* __restrict__ y, int cols) {
    __shared__ float sh[32];
    const float* row = x + (int64_t)blockIdx.x * cols;
    float* out = y + (int64_t)blockIdx.x * cols;
    float m = -INFINITY;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) m = fmaxf(m, gelu_erf(row[j]));
    m = block_max(m, sh);
    float s = 0.0f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) s += expf(gelu_erf(row[j]) - m);
    s = block_sum(s, sh);
    const float inv = 1.0f / s;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) out[j] = expf(gelu_erf(row[j]) - m) * inv;
}

torch::Tensor gelu_softmax_rows(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.dim() == 2, "2D CUDA tensor");
    x = x.contiguous();
    auto y = torch::empty_like(x);
    if (x.numel() == 0) return y;
    gelu_softmax_kernel<<<(unsigned int)x.size(0), 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), (int)x.size(1));
    cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "gelu_softmax_kernel: ", cudaGetErrorString(err));
    return y;
}
"""

gs_cpp_source = """
torch::Tensor gelu_softmax_rows(torch::Tensor x);
"""

gs = load_inline(
    name="gelu_softmax_ext",
    cpp_sources=gs_cpp_source,
    cuda_sources=gs_cuda_source,
    functions=['gelu_softmax_rows'],
    verbose=True,
    extra_cuda_cflags=["-O3", "--use_fast_math"],
)

class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.gelu_softmax = gs.gelu_softmax_rows

    def forward(self, x):
        return self.gelu_softmax(self.linear(x))
