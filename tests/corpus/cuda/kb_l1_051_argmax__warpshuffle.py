# corpus: problem=kb_l1_051_argmax device=cuda expect=accepted policy=both
# style: hand-written PYBIND11_MODULE, AT_DISPATCH_FLOATING_TYPES_AND_HALF, warp-shuffle argmax
# class: 6
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Argmax over one dimension. The input is viewed as (outer, R, inner); one warp reduces the
# R values of one output element with __shfl_down_sync, carrying (value, index) pairs.
# Ties keep the first index and NaN counts as the maximum, as torch.argmax does.

argmax_cuda_src = r"""
#include <torch/extension.h>
#include <ATen/AccumulateType.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <limits>

template <typename acc_t>
__device__ __forceinline__ bool beats(acc_t v, int64_t i, acc_t bv, int64_t bi) {
    const bool v_nan = v != v;
    const bool b_nan = bv != bv;
    if (v_nan || b_nan) {
        if (v_nan && b_nan) return i < bi;
        return v_nan;
    }
    return (v > bv) || (v == bv && i < bi);
}

template <typename scalar_t, int WARPS>
__global__ void argmax_warp_kernel(const scalar_t* __restrict__ x,
                                   int64_t* __restrict__ out,
                                   int64_t outer, int64_t R, int64_t inner) {
    using acc_t = at::acc_type<scalar_t, true>;
    const int lane = threadIdx.x & 31;
    const int64_t o = (int64_t)blockIdx.x * WARPS + (threadIdx.x >> 5);
    const int64_t total = outer * inner;
    if (o >= total) return;   // whole warp exits together (o is uniform across a warp)

    const int64_t ob = o / inner;
    const int64_t ii = o - ob * inner;
    const scalar_t* base = x + ob * R * inner + ii;

    acc_t best_v = -std::numeric_limits<acc_t>::infinity();
    int64_t best_i = std::numeric_limits<int64_t>::max();
    for (int64_t r = lane; r < R; r += 32) {
        const acc_t v = static_cast<acc_t>(base[r * inner]);
        if (beats(v, r, best_v, best_i)) { best_v = v; best_i = r; }
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        const acc_t ov = __shfl_down_sync(0xffffffff, best_v, off);
        const int64_t oi = __shfl_down_sync(0xffffffff, best_i, off);
        if (beats(ov, oi, best_v, best_i)) { best_v = ov; best_i = oi; }
    }
    if (lane == 0) out[o] = best_i;
}

torch::Tensor argmax_dim(torch::Tensor x, int64_t dim) {
    TORCH_CHECK(x.is_cuda(), "argmax_dim: x must be a CUDA tensor");
    TORCH_CHECK(x.dim() >= 1, "argmax_dim: x must have at least one dimension");
    dim = dim < 0 ? dim + x.dim() : dim;
    TORCH_CHECK(dim >= 0 && dim < x.dim(), "argmax_dim: dim out of range");
    TORCH_CHECK(x.size(dim) > 0, "argmax_dim: cannot take argmax over an empty dimension");

    const c10::cuda::CUDAGuard guard(x.device());
    x = x.contiguous();
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < dim; ++d) outer *= x.size(d);
    for (int64_t d = dim + 1; d < x.dim(); ++d) inner *= x.size(d);
    const int64_t R = x.size(dim);

    std::vector<int64_t> out_shape;
    for (int64_t d = 0; d < x.dim(); ++d) if (d != dim) out_shape.push_back(x.size(d));
    auto out = torch::empty(out_shape, x.options().dtype(torch::kLong));
    const int64_t total = outer * inner;
    if (total == 0) return out;

    constexpr int WARPS = 8;
    const dim3 block(WARPS * 32);
    const dim3 grid((unsigned)((total + WARPS - 1) / WARPS));
    auto stream = at::cuda::getCurrentCUDAStream();
    AT_DISPATCH_FLOATING_TYPES_AND_HALF(x.scalar_type(), "argmax_warp_kernel", [&] {
        argmax_warp_kernel<scalar_t, WARPS><<<grid, block, 0, stream>>>(
            x.data_ptr<scalar_t>(), out.data_ptr<int64_t>(), outer, R, inner);
    });
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("argmax_dim", &argmax_dim, "argmax over one dimension (CUDA)",
          py::arg("x"), py::arg("dim"));
}
"""

argmax_ext = load_inline(
    name="kb_l1_051_argmax__warpshuffle",
    cpp_sources="",
    cuda_sources=argmax_cuda_src,
    extra_cuda_cflags=["-O3", "--use_fast_math"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim
        self.argmax = argmax_ext.argmax_dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.argmax(x, self.dim)
