# corpus: problem=kb_l1_089_cumsum device=cuda expect=accepted policy=both
# style: several kernels (row scan templated on float4 or scalar loads, strided scan); __shfl_up_sync warp scan and block scan with a carry; cudaGetLastError macro; __main__ self-test (blind round 8)
# class: 2
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

batch_size = 32768
input_shape = (32768,)
dim = 1

cumsum_cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#define CHECK_LAUNCH(name)                                                                   \
    do {                                                                                     \
        cudaError_t err__ = cudaGetLastError();                                              \
        TORCH_CHECK(err__ == cudaSuccess, name, " launch failed: ", cudaGetErrorString(err__)); \
    } while (0)

constexpr int SCAN_THREADS = 1024;
constexpr int WARPS = SCAN_THREADS / 32;

__device__ __forceinline__ float warp_inclusive_scan(float v) {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
        const float n = __shfl_up_sync(0xffffffffu, v, off);
        if (lane >= off) v += n;
    }
    return v;
}

// Block-wide inclusive scan of one value per thread; returns the inclusive prefix and the block total.
__device__ __forceinline__ float block_inclusive_scan(float v, float* s_warp, float& total) {
    const int lane = threadIdx.x & 31;
    const int wid = threadIdx.x >> 5;
    float inc = warp_inclusive_scan(v);
    if (lane == 31) s_warp[wid] = inc;
    __syncthreads();
    if (wid == 0) {
        float w = lane < WARPS ? s_warp[lane] : 0.f;
        w = warp_inclusive_scan(w);
        if (lane < WARPS) s_warp[lane] = w;     // inclusive prefix of warp totals
    }
    __syncthreads();
    const float warp_offset = wid > 0 ? s_warp[wid - 1] : 0.f;
    total = s_warp[WARPS - 1];
    __syncthreads();                           // s_warp is reused by the next tile
    return inc + warp_offset;
}

// Kernel 1: scan along a contiguous last dimension, one block per row.
// Rows are walked in tiles of SCAN_THREADS * VEC elements; each thread owns VEC consecutive values
// (a float4 when VEC == 4), scans them serially, and the per-thread totals go through the block scan.
template <int VEC>
__global__ void __launch_bounds__(SCAN_THREADS)
row_scan_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t row_len) {
    __shared__ float s_warp[WARPS];
    const float* xr = x + (int64_t)blockIdx.x * row_len;
    float* yr = y + (int64_t)blockIdx.x * row_len;
    constexpr int TILE = SCAN_THREADS * VEC;

    float carry = 0.f;
    for (int64_t base = 0; base < row_len; base += TILE) {
        const int64_t idx = base + (int64_t)threadIdx.x * VEC;
        float v[VEC];
        if (VEC == 4 && idx + 3 < row_len) {
            const float4 q = __ldg(reinterpret_cast<const float4*>(xr + idx));
            v[0] = q.x; v[1] = q.y; v[2] = q.z; v[3] = q.w;
        } else {
#pragma unroll
            for (int j = 0; j < VEC; ++j) v[j] = idx + j < row_len ? __ldg(xr + idx + j) : 0.f;
        }
#pragma unroll
        for (int j = 1; j < VEC; ++j) v[j] += v[j - 1];

        float tile_total;
        const float excl = block_inclusive_scan(v[VEC - 1], s_warp, tile_total) - v[VEC - 1] + carry;

        if (VEC == 4 && idx + 3 < row_len) {
            reinterpret_cast<float4*>(yr + idx)[0] = make_float4(v[0] + excl, v[1] + excl, v[2] + excl, v[3] + excl);
        } else {
#pragma unroll
            for (int j = 0; j < VEC; ++j) if (idx + j < row_len) yr[idx + j] = v[j] + excl;
        }
        carry += tile_total;
    }
}

// Kernel 2: scan along a strided (non-last) dimension. Tensor viewed as [outer, len, inner];
// each thread walks one (outer, inner) column sequentially, neighbouring threads read neighbouring
// addresses, so every step is a coalesced row of loads.
__global__ void strided_scan_kernel(const float* __restrict__ x, float* __restrict__ y,
                                    int64_t outer, int64_t len, int64_t inner) {
    const int64_t columns = outer * inner;
    for (int64_t col = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; col < columns;
         col += (int64_t)gridDim.x * blockDim.x) {
        const int64_t o = col / inner;
        const int64_t i = col - o * inner;
        const float* xp = x + o * len * inner + i;
        float* yp = y + o * len * inner + i;
        float acc = 0.f;
        for (int64_t k = 0; k < len; ++k) {
            acc += __ldg(xp + k * inner);
            yp[k * inner] = acc;
        }
    }
}

torch::Tensor cumsum_forward(torch::Tensor x, int64_t dim) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == at::kFloat, "only float32 is supported");
    const c10::cuda::CUDAGuard guard(x.device());
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    if (xc.numel() == 0) return y;
    if (xc.dim() == 0) { y.copy_(xc); return y; }

    const int64_t nd = xc.dim();
    if (dim < 0) dim += nd;
    TORCH_CHECK(dim >= 0 && dim < nd, "dim out of range");

    int64_t outer = 1, inner = 1;
    const int64_t len = xc.size(dim);
    for (int64_t d = 0; d < dim; ++d) outer *= xc.size(d);
    for (int64_t d = dim + 1; d < nd; ++d) inner *= xc.size(d);
    auto stream = at::cuda::getCurrentCUDAStream();

    if (inner == 1) {
        TORCH_CHECK(outer <= 2147483647LL, "too many rows");
        const bool aligned = (len % 4 == 0) &&
                             (reinterpret_cast<uintptr_t>(xc.data_ptr<float>()) % 16 == 0) &&
                             (reinterpret_cast<uintptr_t>(y.data_ptr<float>()) % 16 == 0);
        if (aligned) {
            row_scan_kernel<4><<<(unsigned)outer, SCAN_THREADS, 0, stream>>>(xc.data_ptr<float>(), y.data_ptr<float>(), len);
            CHECK_LAUNCH("row_scan_kernel<4>");
        } else {
            row_scan_kernel<1><<<(unsigned)outer, SCAN_THREADS, 0, stream>>>(xc.data_ptr<float>(), y.data_ptr<float>(), len);
            CHECK_LAUNCH("row_scan_kernel<1>");
        }
    } else {
        const int threads = 256;
        const int64_t cols = outer * inner;
        const int blocks = (int)std::min<int64_t>((cols + threads - 1) / threads, 65535LL * 16);
        strided_scan_kernel<<<blocks, threads, 0, stream>>>(xc.data_ptr<float>(), y.data_ptr<float>(), outer, len, inner);
        CHECK_LAUNCH("strided_scan_kernel");
    }
    return y;
}
"""

cumsum_cpp_source = "torch::Tensor cumsum_forward(torch::Tensor x, int64_t dim);"

cumsum_ext = load_inline(
    name="cumsum_warp_scan",
    cpp_sources=cumsum_cpp_source,
    cuda_sources=cumsum_cuda_source,
    functions=["cumsum_forward"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return cumsum_ext.cumsum_forward(x, self.dim)


def get_inputs():
    return [torch.rand(batch_size, *input_shape)]


def get_init_inputs():
    return [dim]


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.rand(64, 32768 + 3, device="cuda")[:, :32768]
    m = ModelNew(1)
    torch.cuda.synchronize()
    for t in (x, x.contiguous(), torch.rand(8, 1000, 37, device="cuda")):
        for d in range(t.dim()):
            ref = torch.cumsum(t, dim=d)
            out = ModelNew(d)(t)
            print(tuple(t.shape), d, torch.allclose(out, ref, rtol=1e-4, atol=1e-3))
