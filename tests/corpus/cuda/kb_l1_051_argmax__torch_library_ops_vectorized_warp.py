# corpus: problem=kb_l1_051_argmax device=cuda expect=accepted policy=both
# style: TORCH_LIBRARY schema in cpp_sources, TORCH_LIBRARY_IMPL(CUDA) in cuda_sources, is_python_module=False, torch.ops call; int64 output; AT_DISPATCH_FLOATING_TYPES_AND_HALF; 16-byte loads where aligned; __shfl_down_sync; shared-memory middle-dim reduce (blind round 8)
# class: 2
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# argmax registered as a real PyTorch operator (torch.ops.kb_argmax.argmax) instead of a pybind function.
# Schema lives in the C++ source, the CUDA implementation is registered for the CUDA dispatch key.

argmax_cpp_source = r"""
TORCH_LIBRARY(kb_argmax, m) {
    m.def("argmax(Tensor x, int dim) -> Tensor");
}
"""

argmax_cuda_source = r"""
#include <torch/extension.h>
#include <torch/library.h>
#include <ATen/AccumulateType.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <limits>

namespace {

constexpr int64_t kNoIndex = std::numeric_limits<int64_t>::max();

// torch.argmax semantics: NaN counts as the maximum, ties resolve to the smallest index.
template <typename acc_t>
__device__ __forceinline__ void arg_combine(acc_t& best_v, int64_t& best_i, acc_t v, int64_t i) {
    bool take;
    if (v != v) {                 // v is NaN
        take = (best_v == best_v) || i < best_i;
    } else if (best_v != best_v) {
        take = false;
    } else {
        take = v > best_v || (v == best_v && i < best_i);
    }
    if (take) { best_v = v; best_i = i; }
}

template <typename acc_t>
__device__ __forceinline__ void warp_arg_reduce(acc_t& v, int64_t& i) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        const acc_t ov = __shfl_down_sync(0xffffffffu, v, off);
        const int64_t oi = __shfl_down_sync(0xffffffffu, i, off);
        arg_combine(v, i, ov, oi);
    }
}

template <typename T, int N>
struct alignas(sizeof(T) * N) AlignedVec { T val[N]; };   // float -> 16-byte (float4) loads

// Case 1: reduction over the contiguous last dimension. One warp per row.
// VEC > 1 only when the row length and base pointer allow 16-byte aligned vector loads.
template <typename scalar_t, int VEC>
__global__ void __launch_bounds__(256)
argmax_lastdim_kernel(const scalar_t* __restrict__ x, int64_t* __restrict__ out, int64_t rows, int64_t len) {
    using acc_t = at::acc_type<scalar_t, true>;
    const int lane = threadIdx.x & 31;
    const int64_t row = (int64_t)blockIdx.x * (blockDim.x / 32) + (threadIdx.x >> 5);
    if (row >= rows) return;
    const scalar_t* xr = x + row * len;

    acc_t best_v = -std::numeric_limits<acc_t>::infinity();
    int64_t best_i = kNoIndex;
    if (VEC > 1) {
        const AlignedVec<scalar_t, VEC>* xv = reinterpret_cast<const AlignedVec<scalar_t, VEC>*>(xr);
        const int64_t nvec = len / VEC;
        for (int64_t j = lane; j < nvec; j += 32) {
            const AlignedVec<scalar_t, VEC> pk = xv[j];
#pragma unroll
            for (int k = 0; k < VEC; ++k) arg_combine(best_v, best_i, static_cast<acc_t>(pk.val[k]), j * VEC + k);
        }
    } else {
        for (int64_t j = lane; j < len; j += 32) arg_combine(best_v, best_i, static_cast<acc_t>(xr[j]), j);
    }
    warp_arg_reduce(best_v, best_i);
    if (lane == 0) out[row] = best_i;
}

// Case 2: reduction over a strided dimension, tensor viewed as [outer, len, inner].
// blockDim = (32, RY): threadIdx.x walks neighbouring inner columns (coalesced), threadIdx.y splits
// the reduced dimension; partial results are merged through shared memory.
constexpr int RY = 8;

template <typename scalar_t>
__global__ void __launch_bounds__(32 * RY)
argmax_inner_kernel(const scalar_t* __restrict__ x, int64_t* __restrict__ out,
                    int64_t len, int64_t inner) {
    using acc_t = at::acc_type<scalar_t, true>;
    __shared__ acc_t s_v[RY][32];
    __shared__ int64_t s_i[RY][32];

    const int64_t o = blockIdx.y;
    const int64_t col = (int64_t)blockIdx.x * 32 + threadIdx.x;
    acc_t best_v = -std::numeric_limits<acc_t>::infinity();
    int64_t best_i = kNoIndex;
    if (col < inner) {
        const scalar_t* base = x + o * len * inner + col;
        for (int64_t r = threadIdx.y; r < len; r += RY)
            arg_combine(best_v, best_i, static_cast<acc_t>(base[r * inner]), r);
    }
    s_v[threadIdx.y][threadIdx.x] = best_v;
    s_i[threadIdx.y][threadIdx.x] = best_i;
    __syncthreads();
    if (threadIdx.y == 0 && col < inner) {
#pragma unroll
        for (int y = 1; y < RY; ++y) arg_combine(best_v, best_i, s_v[y][threadIdx.x], s_i[y][threadIdx.x]);
        out[o * inner + col] = best_i;
    }
}

torch::Tensor argmax_cuda(const torch::Tensor& x_in, int64_t dim) {
    TORCH_CHECK(x_in.is_cuda(), "argmax: expected a CUDA tensor");
    TORCH_CHECK(x_in.dim() > 0, "argmax: expected at least 1 dimension");
    const int64_t nd = x_in.dim();
    if (dim < 0) dim += nd;
    TORCH_CHECK(dim >= 0 && dim < nd, "argmax: dim out of range");
    TORCH_CHECK(x_in.size(dim) > 0, "argmax: cannot reduce over a zero-size dimension");
    const c10::cuda::CUDAGuard guard(x_in.device());

    auto x = x_in.contiguous();
    std::vector<int64_t> out_shape;
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < nd; ++d) {
        if (d != dim) out_shape.push_back(x.size(d));
        if (d < dim) outer *= x.size(d);
        if (d > dim) inner *= x.size(d);
    }
    const int64_t len = x.size(dim);
    auto out = torch::empty(out_shape, x.options().dtype(torch::kLong));
    if (out.numel() == 0) return out;
    auto stream = at::cuda::getCurrentCUDAStream();

    AT_DISPATCH_FLOATING_TYPES_AND_HALF(x.scalar_type(), "kb_argmax", [&] {
        const scalar_t* xp = x.data_ptr<scalar_t>();
        int64_t* op = out.data_ptr<int64_t>();
        if (inner == 1) {
            constexpr int V = 16 / sizeof(scalar_t);
            const bool vec_ok = (len % V == 0) && (reinterpret_cast<uintptr_t>(xp) % 16 == 0);
            const int warps_per_block = 8;
            const int64_t blocks = (outer + warps_per_block - 1) / warps_per_block;
            if (vec_ok)
                argmax_lastdim_kernel<scalar_t, V><<<blocks, 32 * warps_per_block, 0, stream>>>(xp, op, outer, len);
            else
                argmax_lastdim_kernel<scalar_t, 1><<<blocks, 32 * warps_per_block, 0, stream>>>(xp, op, outer, len);
        } else {
            TORCH_CHECK(outer <= 65535, "argmax: outer size too large for grid.y");
            dim3 block(32, RY);
            dim3 grid((unsigned)((inner + 31) / 32), (unsigned)outer);
            argmax_inner_kernel<scalar_t><<<grid, block, 0, stream>>>(xp, op, len, inner);
        }
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    });
    return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(kb_argmax, CUDA, m) {
    m.impl("argmax", &argmax_cuda);
}
"""

# is_python_module=False: the shared library is loaded with torch.ops.load_library, which runs the
# TORCH_LIBRARY registrations; no pybind functions are needed.
load_inline(
    name="kb_argmax_ops",
    cpp_sources=argmax_cpp_source,
    cuda_sources=argmax_cuda_source,
    extra_cuda_cflags=["-O3"],
    is_python_module=False,
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.ops.kb_argmax.argmax(x, self.dim)
