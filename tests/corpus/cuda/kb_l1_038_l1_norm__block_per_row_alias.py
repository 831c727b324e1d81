# corpus: problem=kb_l1_038_l1_norm device=cuda expect=accepted policy=both
# style: self.op alias
# class: 1,4,6
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

lp_cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__inline__ __device__ float warp_reduce_sum(float val) {
    for (int offset = warpSize / 2; offset > 0; offset /= 2) val += __shfl_down_sync(0xffffffff, val, offset);
    return val;
}

__inline__ __device__ float block_reduce_sum(float val) {
    static __shared__ float shared[32];
    const int lane = threadIdx.x % warpSize, wid = threadIdx.x / warpSize;
    val = warp_reduce_sum(val);
    if (lane == 0) shared[wid] = val;
    __syncthreads();
    val = (threadIdx.x < blockDim.x / warpSize) ? shared[lane] : 0.0f;
    if (wid == 0) val = warp_reduce_sum(val);
    return val;
}

// One block per row: the row's L1 (P == 1) or L2 (P == 2) norm, then the row divided by it.
template <int P>
__global__ void row_normalize_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t cols) {
    const float* row = x + blockIdx.x * cols;
    float* out = y + blockIdx.x * cols;
    float acc = 0.0f;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) acc += (P == 1) ? fabsf(row[j]) : row[j] * row[j];
    __shared__ float norm;
    float total = block_reduce_sum(acc);
    if (threadIdx.x == 0) norm = (P == 1) ? total : sqrtf(total);
    __syncthreads();
    const float inv = 1.0f / norm;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) out[j] = row[j] * inv;
}

template <int P>
static torch::Tensor normalize_rows(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.dim() == 2, "2D CUDA tensor expected");
    x = x.contiguous();
    auto y = torch::empty_like(x);
    if (x.numel() == 0) return y;
    row_normalize_kernel<P><<<(unsigned int)x.size(0), 512>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.size(1));
    cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, cudaGetErrorString(err));
    return y;
}

torch::Tensor l1_normalize(torch::Tensor x) { return normalize_rows<1>(x); }
torch::Tensor l2_normalize(torch::Tensor x) { return normalize_rows<2>(x); }
"""

lp_cpp_source = """
torch::Tensor l1_normalize(torch::Tensor x);
torch::Tensor l2_normalize(torch::Tensor x);
"""

lp = load_inline(
    name="row_lp_normalize_ext",
    cpp_sources=lp_cpp_source,
    cuda_sources=lp_cuda_source,
    functions=['l1_normalize', 'l2_normalize'],
    verbose=True,
    extra_cuda_cflags=["-O3", "--use_fast_math"],
)

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = lp.l1_normalize

    def forward(self, x):
        return self.l1(x)
