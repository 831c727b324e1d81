# corpus: problem=kb_l1_089_cumsum device=cuda expect=accepted policy=both
# style: self.op alias
# class: 1,6
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

scan_cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

#define SCAN_THREADS 1024

// One block per row; the row is scanned in chunks of 1024: a warp-level inclusive scan with shuffles, the warps'
// totals scanned by warp 0, and a running carry between chunks.
__global__ void row_scan_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t cols) {
    __shared__ float warp_totals[32];
    __shared__ float carry;
    const float* row = x + (int64_t)blockIdx.x * cols;
    float* out = y + (int64_t)blockIdx.x * cols;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (threadIdx.x == 0) carry = 0.0f;
    __syncthreads();
    for (int64_t base = 0; base < cols; base += SCAN_THREADS) {
        const int64_t j = base + threadIdx.x;
        float v = j < cols ? row[j] : 0.0f;
        for (int off = 1; off < 32; off <<= 1) {
            float u = __shfl_up_sync(0xffffffff, v, off);
            if (lane >= off) v += u;
        }
        if (lane == 31) warp_totals[warp] = v;
        __syncthreads();
        if (warp == 0) {
            float t = warp_totals[lane];
            for (int off = 1; off < 32; off <<= 1) {
                float u = __shfl_up_sync(0xffffffff, t, off);
                if (lane >= off) t += u;
            }
            warp_totals[lane] = t;
        }
        __syncthreads();
        const float prefix = carry + (warp > 0 ? warp_totals[warp - 1] : 0.0f);
        if (j < cols) out[j] = prefix + v;
        __syncthreads();
        if (threadIdx.x == SCAN_THREADS - 1) carry = prefix + v;
        __syncthreads();
    }
}

torch::Tensor cumsum_rows(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.dim() == 2, "2D CUDA tensor expected (scan along dim 1)");
    x = x.contiguous();
    auto y = torch::empty_like(x);
    if (x.numel() == 0) return y;
    row_scan_kernel<<<(unsigned int)x.size(0), SCAN_THREADS>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.size(1));
    cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "row_scan_kernel: ", cudaGetErrorString(err));
    return y;
}
"""

scan_cpp_source = """
torch::Tensor cumsum_rows(torch::Tensor x);
"""

scan = load_inline(
    name="row_cumsum_ext",
    cpp_sources=scan_cpp_source,
    cuda_sources=scan_cuda_source,
    functions=['cumsum_rows'],
    verbose=True,
    extra_cuda_cflags=["-O3", "--use_fast_math"],
)

class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim
        self.cumsum = scan.cumsum_rows

    def forward(self, x):
        return self.cumsum(x)
