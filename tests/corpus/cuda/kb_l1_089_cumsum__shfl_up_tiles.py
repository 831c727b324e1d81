# corpus: problem=kb_l1_089_cumsum device=cuda expect=accepted policy=both
# style: 64 KB extern __shared__ tile with cudaFuncSetAttribute, __shfl_up_sync warp scan, carry between tiles, transpose glue for other dims, __main__ test
# class: 6
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

batch_size = 32768
input_shape = (32768,)
dim = 1

scan_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

#define SCAN_THREADS 1024
#define ITEMS_PER_THREAD 16
#define TILE (SCAN_THREADS * ITEMS_PER_THREAD)   // 16384 floats = 64 KB of dynamic smem

__device__ __forceinline__ float warp_inclusive_scan(float v) {
    const int lane = threadIdx.x & 31;
    #pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
        float n = __shfl_up_sync(0xffffffffu, v, off);
        if (lane >= off) v += n;
    }
    return v;
}

// One block per row. The row is processed in tiles of TILE elements that are
// staged in dynamic shared memory; a running carry links consecutive tiles.
__global__ void __launch_bounds__(SCAN_THREADS)
row_cumsum_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t L) {
    extern __shared__ float tile[];
    __shared__ float warp_sums[SCAN_THREADS / 32];
    __shared__ float carry_sh;

    const int tid = threadIdx.x;
    const int lane = tid & 31;
    const int warp = tid >> 5;
    const float* xr = x + (int64_t)blockIdx.x * L;
    float* yr = y + (int64_t)blockIdx.x * L;

    if (tid == 0) carry_sh = 0.0f;
    __syncthreads();

    for (int64_t start = 0; start < L; start += TILE) {
        const int len = (int)min((int64_t)TILE, L - start);

        // coalesced load
        for (int i = tid; i < TILE; i += SCAN_THREADS)
            tile[i] = (i < len) ? xr[start + i] : 0.0f;
        __syncthreads();

        // sequential scan of this thread's contiguous chunk
        float local[ITEMS_PER_THREAD];
        float run = 0.0f;
        #pragma unroll
        for (int k = 0; k < ITEMS_PER_THREAD; ++k) {
            run += tile[tid * ITEMS_PER_THREAD + k];
            local[k] = run;
        }

        // block-wide exclusive scan of chunk totals
        float incl = warp_inclusive_scan(run);
        if (lane == 31) warp_sums[warp] = incl;
        __syncthreads();
        if (warp == 0) {
            float ws = warp_sums[lane];
            warp_sums[lane] = warp_inclusive_scan(ws);
        }
        __syncthreads();

        const float carry = carry_sh;
        const float warp_prefix = (warp > 0) ? warp_sums[warp - 1] : 0.0f;
        const float offset = carry + warp_prefix + (incl - run);

        #pragma unroll
        for (int k = 0; k < ITEMS_PER_THREAD; ++k)
            tile[tid * ITEMS_PER_THREAD + k] = local[k] + offset;
        __syncthreads();

        // coalesced store
        for (int i = tid; i < len; i += SCAN_THREADS)
            yr[start + i] = tile[i];

        if (tid == 0) carry_sh = carry + warp_sums[SCAN_THREADS / 32 - 1];
        __syncthreads();
    }
}

torch::Tensor cumsum_lastdim(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "x must be CUDA");
    TORCH_CHECK(x.scalar_type() == at::kFloat, "float32 only");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    if (xc.numel() == 0) return y;
    const int64_t L = xc.size(-1);
    const int64_t rows = xc.numel() / L;
    TORCH_CHECK(rows <= 2147483647LL, "too many rows");

    const size_t smem = TILE * sizeof(float);
    C10_CUDA_CHECK(cudaFuncSetAttribute(row_cumsum_kernel,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        (int)smem));
    auto stream = at::cuda::getCurrentCUDAStream();
    row_cumsum_kernel<<<(unsigned)rows, SCAN_THREADS, smem, stream>>>(
        xc.data_ptr<float>(), y.data_ptr<float>(), L);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

scan_cpp = "torch::Tensor cumsum_lastdim(torch::Tensor x);"

scan_ext = load_inline(
    name="row_cumsum_tiles_ext",
    cpp_sources=scan_cpp,
    cuda_sources=scan_source,
    functions=["cumsum_lastdim"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim
        self.cumsum_op = scan_ext.cumsum_lastdim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        d = self.dim % x.dim()
        if d == x.dim() - 1:
            return self.cumsum_op(x)
        # bring the scanned dimension last, scan, and move it back
        xt = x.transpose(d, -1).contiguous()
        return self.cumsum_op(xt).transpose(d, -1).contiguous()


def get_inputs():
    return [torch.rand(batch_size, *input_shape)]


def get_init_inputs():
    return [dim]


if __name__ == "__main__":
    m = ModelNew(1).cuda()
    for L in (7, 1000, 16384, 40000):
        x = torch.rand(5, L, device="cuda")
        torch.testing.assert_close(m(x), torch.cumsum(x, 1), rtol=1e-4, atol=1e-3)
    print("ok")
