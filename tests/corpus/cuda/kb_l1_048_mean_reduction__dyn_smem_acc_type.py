# corpus: problem=kb_l1_048_mean_reduction device=cuda expect=accepted policy=both
# style: extern __shared__ __align__ + cudaFuncSetAttribute, templated <scalar_t, acc_t> with at::acc_type, AT_DISPATCH_FLOATING_TYPES_AND_HALF, any-dim reduction on the current stream
# class: 6
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

batch_size = 128
dim1 = 4096
dim2 = 4095
reduce_dim = 1

mean_cuda = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/AccumulateType.h>
#include <ATen/Dispatch.h>

// View the input as (outer, R, inner) and reduce over R.
// blockDim = (TX, TY): threadIdx.x walks contiguous `inner` columns (coalesced),
// threadIdx.y splits R. Partial sums meet in dynamic shared memory.
template <typename scalar_t, typename acc_t>
__global__ void mean_dim_kernel(const scalar_t* __restrict__ x,
                                scalar_t* __restrict__ out,
                                int64_t R, int64_t inner, acc_t inv_R) {
    extern __shared__ __align__(16) unsigned char smem_raw[];
    acc_t* smem = reinterpret_cast<acc_t*>(smem_raw);

    const int tx = threadIdx.x, ty = threadIdx.y;
    const int TX = blockDim.x, TY = blockDim.y;
    const int64_t col = (int64_t)blockIdx.x * TX + tx;
    const int64_t o = blockIdx.y;

    acc_t acc = acc_t(0);
    if (col < inner) {
        const scalar_t* base = x + o * R * inner + col;
        #pragma unroll 4
        for (int64_t r = ty; r < R; r += TY) {
            acc += static_cast<acc_t>(base[r * inner]);
        }
    }
    smem[ty * TX + tx] = acc;
    __syncthreads();

    for (int s = TY / 2; s > 0; s >>= 1) {
        if (ty < s) smem[ty * TX + tx] += smem[(ty + s) * TX + tx];
        __syncthreads();
    }
    if (ty == 0 && col < inner) {
        out[o * inner + col] = static_cast<scalar_t>(smem[tx] * inv_R);
    }
}

torch::Tensor mean_dim_cuda(torch::Tensor x, int64_t dim) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.dim() >= 1, "x must have at least one dimension");
    if (dim < 0) dim += x.dim();
    TORCH_CHECK(dim >= 0 && dim < x.dim(), "dim out of range");

    auto xc = x.contiguous();
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < dim; ++i) outer *= xc.size(i);
    for (int64_t i = dim + 1; i < xc.dim(); ++i) inner *= xc.size(i);
    const int64_t R = xc.size(dim);

    std::vector<int64_t> out_shape;
    for (int64_t i = 0; i < xc.dim(); ++i)
        if (i != dim) out_shape.push_back(xc.size(i));
    auto out = torch::empty(out_shape, xc.options());
    if (out.numel() == 0) return out;
    TORCH_CHECK(outer <= 65535, "outer size too large for gridDim.y");

    const int TX = 32, TY = 16;
    dim3 block(TX, TY);
    dim3 grid((unsigned)((inner + TX - 1) / TX), (unsigned)outer);
    auto stream = at::cuda::getCurrentCUDAStream();

    AT_DISPATCH_FLOATING_TYPES_AND_HALF(xc.scalar_type(), "mean_dim_cuda", [&] {
        using acc_t = at::acc_type<scalar_t, true>;
        const size_t smem = sizeof(acc_t) * TX * TY;
        auto kern = mean_dim_kernel<scalar_t, acc_t>;
        cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
        kern<<<grid, block, smem, stream>>>(
            xc.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(), R, inner,
            static_cast<acc_t>(1.0 / (double)R));
    });
    C10_CUDA_CHECK(cudaGetLastError());
    return out;
}
"""

mean_cpp = "torch::Tensor mean_dim_cuda(torch::Tensor x, int64_t dim);"

mean_ext = load_inline(
    name="mean_dim_ext",
    cpp_sources=mean_cpp,
    cuda_sources=mean_cuda,
    functions=["mean_dim_cuda"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return mean_ext.mean_dim_cuda(x, self.dim)


def get_inputs():
    return [torch.randn(batch_size, dim1, dim2)]


def get_init_inputs():
    return [reduce_dim]
