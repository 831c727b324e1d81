# corpus: problem=kb_l1_053_min_reduce device=cuda expect=accepted policy=both
# style: hand-written PYBIND11_MODULE with py::arg in cpp_sources, the extension kept as self.min_reduce, AT_DISPATCH_FLOATING_TYPES_AND_HALF, at::opmath_type, __ldg with a c10::Half specialisation, NaN-propagating min, a strided kernel and a warp-per-row shuffle kernel for the last dim, getCurrentCUDAStream, cudaGetLastError check (blind round 13)
# class: 1
from typing import List

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

min_reduce_cuda_source = """
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>
#include <ATen/OpMathType.h>
#include <cuda_fp16.h>
#include <cfloat>

// read-only cached load; __ldg has no overload for c10::Half, so go through __half there
template <typename scalar_t>
__device__ __forceinline__ at::opmath_type<scalar_t> load_ro(const scalar_t* p) { return __ldg(p); }
template <>
__device__ __forceinline__ float load_ro<c10::Half>(const c10::Half* p) {
    return __half2float(__ldg(reinterpret_cast<const __half*>(p)));
}

template <typename T>
__device__ __forceinline__ T min_nan(T a, T b) {
    // torch.min propagates NaN
    if (a != a) return a;
    if (b != b) return b;
    return b < a ? b : a;
}

// Reduction over a middle (strided) dim: each thread owns one (outer, inner) output and
// walks the reduced axis with stride `inner`, so neighbouring threads read neighbouring addresses.
template <typename scalar_t>
__global__ void min_strided_kernel(const scalar_t* __restrict__ in, scalar_t* __restrict__ out,
                                   int64_t outer, int64_t red, int64_t inner) {
    const int64_t total = outer * inner;
    for (int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; idx < total;
         idx += (int64_t)gridDim.x * blockDim.x) {
        const int64_t o = idx / inner;
        const int64_t i = idx - o * inner;
        const scalar_t* p = in + o * red * inner + i;
        using acc_t = at::opmath_type<scalar_t>;
        acc_t m = static_cast<acc_t>(INFINITY);
        #pragma unroll 4
        for (int64_t r = 0; r < red; ++r) m = min_nan(m, load_ro(p + r * inner));
        out[idx] = static_cast<scalar_t>(m);
    }
}

// Reduction over the innermost (contiguous) dim: one warp per output row.
template <typename scalar_t>
__global__ void min_lastdim_kernel(const scalar_t* __restrict__ in, scalar_t* __restrict__ out,
                                   int64_t rows, int64_t red) {
    const int lane = threadIdx.x & 31;
    const int64_t warps_total = (int64_t)gridDim.x * (blockDim.x >> 5);
    for (int64_t row = blockIdx.x * (int64_t)(blockDim.x >> 5) + (threadIdx.x >> 5); row < rows;
         row += warps_total) {
        const scalar_t* p = in + row * red;
        using acc_t = at::opmath_type<scalar_t>;
        acc_t m = static_cast<acc_t>(INFINITY);
        for (int64_t r = lane; r < red; r += 32) m = min_nan(m, load_ro(p + r));
        #pragma unroll
        for (int off = 16; off > 0; off >>= 1) m = min_nan(m, __shfl_xor_sync(0xffffffffu, m, off));
        if (lane == 0) out[row] = static_cast<scalar_t>(m);
    }
}

torch::Tensor min_reduce_cuda(torch::Tensor x, int64_t dim) {
    TORCH_CHECK(x.is_cuda(), "min_reduce_cuda: x must be on CUDA");
    const int64_t nd = x.dim();
    if (dim < 0) dim += nd;
    TORCH_CHECK(dim >= 0 && dim < nd, "min_reduce_cuda: dim out of range");
    TORCH_CHECK(x.size(dim) > 0, "min_reduce_cuda: cannot reduce an empty dimension");

    auto xc = x.contiguous();
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < dim; ++d) outer *= xc.size(d);
    for (int64_t d = dim + 1; d < nd; ++d) inner *= xc.size(d);
    const int64_t red = xc.size(dim);

    std::vector<int64_t> out_shape;
    for (int64_t d = 0; d < nd; ++d) if (d != dim) out_shape.push_back(xc.size(d));
    auto out = torch::empty(out_shape, xc.options());

    at::cuda::CUDAStream stream = at::cuda::getCurrentCUDAStream();
    const int threads = 256;

    AT_DISPATCH_FLOATING_TYPES_AND_HALF(xc.scalar_type(), "min_reduce_cuda", [&] {
        if (inner == 1) {
            const int64_t warps_per_block = threads / 32;
            int64_t blocks = (outer + warps_per_block - 1) / warps_per_block;
            blocks = std::min<int64_t>(blocks, 65535);
            min_lastdim_kernel<scalar_t><<<blocks, threads, 0, stream.stream()>>>(
                xc.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(), outer, red);
        } else {
            int64_t blocks = (outer * inner + threads - 1) / threads;
            blocks = std::min<int64_t>(blocks, 65535 * 8);
            min_strided_kernel<scalar_t><<<blocks, threads, 0, stream.stream()>>>(
                xc.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(), outer, red, inner);
        }
    });
    cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "min_reduce_cuda launch failed: ", cudaGetErrorString(err));
    return out;
}
"""

min_reduce_cpp_source = """
#include <torch/extension.h>

torch::Tensor min_reduce_cuda(torch::Tensor x, int64_t dim);

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("min_reduce", &min_reduce_cuda, "min over one dimension (values only)",
          py::arg("x"), py::arg("dim"));
}
"""

min_reduce = load_inline(
    name="kb_l1_053_min_reduce__cuda_pybind_pyarg_cudastream_ldg_twokernels",
    cpp_sources=[min_reduce_cpp_source],
    cuda_sources=[min_reduce_cuda_source],
    extra_cuda_cflags=["-O3"],
    verbose=True,
)


class ModelNew(nn.Module):
    """
    Min reduction over a specific dimension using a custom CUDA kernel.
    """

    def __init__(self, dim: int):
        super(ModelNew, self).__init__()
        self.dim = dim
        self.min_reduce = min_reduce

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.min_reduce.min_reduce(x, dim=self.dim)


batch_size = 128
dim1 = 4096
dim2 = 4095


def get_inputs() -> List[torch.Tensor]:
    x = torch.rand(batch_size, dim1, dim2)
    return [x]


def get_init_inputs() -> List[int]:
    return [1]
