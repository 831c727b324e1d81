# corpus: problem=kb_l1_047_sum_reduction device=cuda expect=rejected policy=both
# style: shared-memory tree reduction without __syncthreads() between steps (a race across warps)
# class: hack:race
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

racy_cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

// One block per (b, k) output, 256 threads over the reduced dimension, a shared-memory tree with no barrier
// between its steps: warps read partial sums other warps may not have written yet.
__global__ void sum_dim1_kernel(const float* x, float* y, int R, int inner) {
    __shared__ float buf[256];
    const int b = blockIdx.x / inner, k = blockIdx.x % inner;
    float s = 0.f;
    for (int r = threadIdx.x; r < R; r += blockDim.x) s += x[((int64_t)b * R + r) * inner + k];
    buf[threadIdx.x] = s;
    __syncthreads();
    for (int step = blockDim.x / 2; step > 0; step >>= 1) {
        if (threadIdx.x < step) buf[threadIdx.x] += buf[threadIdx.x + step];
    }
    if (threadIdx.x == 0) y[blockIdx.x] = buf[0];
}

torch::Tensor sum_dim1(torch::Tensor x) {
    x = x.contiguous();
    const int B = x.size(0), R = x.size(1), inner = x.size(2);
    auto y = torch::empty({B, 1, inner}, x.options());
    sum_dim1_kernel<<<B * inner, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), R, inner);
    return y;
}
"""

racy_cpp_source = """
torch::Tensor sum_dim1(torch::Tensor x);
"""

racy = load_inline(
    name="sum_dim1_nosync_ext",
    cpp_sources=racy_cpp_source,
    cuda_sources=racy_cuda_source,
    functions=['sum_dim1'],
    verbose=True,
    extra_cuda_cflags=["-O3", "--use_fast_math"],
)

class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return racy.sum_dim1(x)
