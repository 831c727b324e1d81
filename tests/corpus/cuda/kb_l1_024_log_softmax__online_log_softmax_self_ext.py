# corpus: problem=kb_l1_024_log_softmax device=cuda expect=accepted policy=both
# style: self.kernels = ext
# class: 1,4,6
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

sm_cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <cfloat>

#define THREADS 1024
#define WARPS (THREADS / 32)

// Merge two (max, sum of exp(x - max)) pairs.
__device__ __forceinline__ void merge(float& m, float& s, float m2, float s2) {
    if (m2 == -INFINITY) return;
    if (m == -INFINITY) { m = m2; s = s2; return; }
    float mx = fmaxf(m, m2);
    s = s * expf(m - mx) + s2 * expf(m2 - mx);
    m = mx;
}

// One block per row: an online max/sum pass, then the output pass.
template <bool LOG>
__global__ void row_softmax_kernel(const float* __restrict__ x, float* __restrict__ y, int cols) {
    const float* row = x + (int64_t)blockIdx.x * cols;
    float* out = y + (int64_t)blockIdx.x * cols;
    float m = -INFINITY, s = 0.0f;
    for (int j = threadIdx.x; j < cols; j += THREADS) merge(m, s, row[j], 1.0f);
    for (int off = 16; off > 0; off >>= 1) {
        float m2 = __shfl_down_sync(0xffffffff, m, off);
        float s2 = __shfl_down_sync(0xffffffff, s, off);
        merge(m, s, m2, s2);
    }
    __shared__ float sm[WARPS], ss[WARPS];
    __shared__ float row_max, row_sum;
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) { sm[warp] = m; ss[warp] = s; }
    __syncthreads();
    if (warp == 0) {
        m = lane < WARPS ? sm[lane] : -INFINITY;
        s = lane < WARPS ? ss[lane] : 0.0f;
        for (int off = 16; off > 0; off >>= 1) {
            float m2 = __shfl_down_sync(0xffffffff, m, off);
            float s2 = __shfl_down_sync(0xffffffff, s, off);
            merge(m, s, m2, s2);
        }
        if (lane == 0) { row_max = m; row_sum = s; }
    }
    __syncthreads();
    const float mx = row_max;
    if (LOG) {
        const float lse = logf(row_sum);
        for (int j = threadIdx.x; j < cols; j += THREADS) out[j] = row[j] - mx - lse;
    } else {
        const float inv = 1.0f / row_sum;
        for (int j = threadIdx.x; j < cols; j += THREADS) out[j] = expf(row[j] - mx) * inv;
    }
}

template <bool LOG>
static torch::Tensor run(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.dim() == 2, "expects a 2D CUDA tensor (softmax over dim 1)");
    x = x.contiguous();
    auto y = torch::empty_like(x);
    const int64_t rows = x.size(0);
    const int cols = (int)x.size(1);
    if (rows == 0 || cols == 0) return y;
    row_softmax_kernel<LOG><<<(unsigned int)rows, THREADS>>>(x.data_ptr<float>(), y.data_ptr<float>(), cols);
    cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "row_softmax_kernel: ", cudaGetErrorString(err));
    return y;
}

torch::Tensor softmax_cuda(torch::Tensor x) { return run<false>(x); }
torch::Tensor log_softmax_cuda(torch::Tensor x) { return run<true>(x); }
"""

sm_cpp_source = """
torch::Tensor softmax_cuda(torch::Tensor x);
torch::Tensor log_softmax_cuda(torch::Tensor x);
"""

sm = load_inline(
    name="row_softmax_ext",
    cpp_sources=sm_cpp_source,
    cuda_sources=sm_cuda_source,
    functions=['softmax_cuda', 'log_softmax_cuda'],
    verbose=True,
    extra_cuda_cflags=["-O3", "--use_fast_math"],
)

class ModelNew(nn.Module):
    def __init__(self, dim: int = 1):
        super().__init__()
        self.dim = dim
        self.kernels = sm

    def forward(self, x):
        return self.kernels.log_softmax_cuda(x)
