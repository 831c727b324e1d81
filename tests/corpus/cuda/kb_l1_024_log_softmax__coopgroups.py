# corpus: problem=kb_l1_024_log_softmax device=cuda expect=accepted policy=both
# style: cooperative groups cg::reduce per row
# class: 6
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

namespace cg = cooperative_groups;

// Block-wide reduction built from cooperative-groups warp reductions.
// Result is returned to every thread of the block.
template <int BLOCK, typename Op>
__device__ __forceinline__ float block_reduce(float v, Op op, float identity, float* warp_buf) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    v = cg::reduce(warp, v, op);
    if (warp.thread_rank() == 0) warp_buf[warp.meta_group_rank()] = v;
    block.sync();
    float r = (warp.thread_rank() < BLOCK / 32) ? warp_buf[warp.thread_rank()] : identity;
    r = cg::reduce(warp, r, op);   // every warp reduces the partials -> everyone has the result
    block.sync();                  // warp_buf may be reused by the next call
    return r;
}

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
log_softmax_rows_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t cols) {
    __shared__ float warp_buf[BLOCK / 32];
    const int64_t row = blockIdx.x;
    const float* xr = x + row * cols;
    float* yr = y + row * cols;

    float m = -INFINITY;
    for (int64_t i = threadIdx.x; i < cols; i += BLOCK) m = fmaxf(m, __ldg(xr + i));
    const float row_max = block_reduce<BLOCK>(m, cg::greater<float>(), -INFINITY, warp_buf);

    float s = 0.0f;
    for (int64_t i = threadIdx.x; i < cols; i += BLOCK) s += __expf(__ldg(xr + i) - row_max);
    const float row_sum = block_reduce<BLOCK>(s, cg::plus<float>(), 0.0f, warp_buf);

    const float lse = row_max + logf(row_sum);
    for (int64_t i = threadIdx.x; i < cols; i += BLOCK) yr[i] = xr[i] - lse;
}

torch::Tensor log_softmax_lastdim(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == at::kFloat, "x must be float32");
    TORCH_CHECK(x.dim() >= 1, "x must have at least one dimension");
    const c10::cuda::CUDAGuard device_guard(x.device());
    x = x.contiguous();
    auto y = torch::empty_like(x);
    const int64_t cols = x.size(-1);
    const int64_t rows = cols == 0 ? 0 : x.numel() / cols;
    if (rows == 0) return y;
    constexpr int BLOCK = 512;
    log_softmax_rows_kernel<BLOCK><<<(unsigned)rows, BLOCK, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), cols);
    cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "log_softmax kernel launch failed: ", cudaGetErrorString(err));
    return y;
}
"""

cpp_src = "torch::Tensor log_softmax_lastdim(torch::Tensor x);"

log_softmax_ext = load_inline(
    name="kb_l1_024_log_softmax__coopgroups",
    cpp_sources=cpp_src,
    cuda_sources=cuda_src,
    functions=["log_softmax_lastdim"],
    extra_cuda_cflags=["-O3", "--use_fast_math"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int = 1):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dim = self.dim % x.dim()
        if dim == x.dim() - 1:
            return log_softmax_ext.log_softmax_lastdim(x)
        # move the softmax dimension last, run the row kernel, move it back
        xt = x.transpose(dim, -1)
        return log_softmax_ext.log_softmax_lastdim(xt).transpose(dim, -1)
