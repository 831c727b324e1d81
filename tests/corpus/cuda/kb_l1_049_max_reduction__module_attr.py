# corpus: problem=kb_l1_049_max_reduction device=cuda expect=accepted policy=both
# style: extension stored on the module, max over any dim with __ldg
# class: 1,6
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

max_reduce_cuda = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <vector>

// x viewed as (outer, R, inner); one thread per (outer, inner) output, grid-stride loop.
template <typename scalar_t>
__global__ void max_dim_kernel(const scalar_t* __restrict__ x, scalar_t* __restrict__ out,
                               int64_t outer, int64_t R, int64_t inner) {
    const int64_t total = outer * inner;
    for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < total;
         idx += (int64_t)gridDim.x * blockDim.x) {
        const int64_t o = idx / inner;
        const int64_t i = idx - o * inner;
        const scalar_t* p = x + o * R * inner + i;
        scalar_t m = __ldg(p);
        for (int64_t r = 1; r < R; ++r) {
            const scalar_t v = __ldg(p + r * inner);
            if (v > m || v != v) m = v;  // NaN propagates, as in torch.max
        }
        out[idx] = m;
    }
}

torch::Tensor max_dim_cuda(torch::Tensor x, int64_t dim) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.dim() > 0, "x must have at least one dimension");
    if (dim < 0) dim += x.dim();
    TORCH_CHECK(dim >= 0 && dim < x.dim(), "dim out of range");
    TORCH_CHECK(x.size(dim) > 0, "cannot take max over an empty dimension");

    auto xc = x.contiguous();
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < dim; ++d) outer *= xc.size(d);
    for (int64_t d = dim + 1; d < xc.dim(); ++d) inner *= xc.size(d);
    const int64_t R = xc.size(dim);

    std::vector<int64_t> out_sizes;
    for (int64_t d = 0; d < xc.dim(); ++d)
        if (d != dim) out_sizes.push_back(xc.size(d));
    auto out = torch::empty(out_sizes, xc.options());
    const int64_t total = outer * inner;
    if (total == 0) return out;

    const int threads = 256;
    const int blocks = (int)std::min<int64_t>((total + threads - 1) / threads, 65535);
    auto stream = at::cuda::getCurrentCUDAStream();
    AT_DISPATCH_FLOATING_TYPES(xc.scalar_type(), "max_dim_cuda", [&] {
        max_dim_kernel<scalar_t><<<blocks, threads, 0, stream>>>(
            xc.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(), outer, R, inner);
    });
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

max_reduce_cpp = "torch::Tensor max_dim_cuda(torch::Tensor x, int64_t dim);"

max_reduce_ext = load_inline(
    name="kb_l1_049_max_reduction__module_attr",
    cpp_sources=max_reduce_cpp,
    cuda_sources=max_reduce_cuda,
    functions=["max_dim_cuda"],
    extra_cuda_cflags=["-O3", "--use_fast_math"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim
        self.max_op = max_reduce_ext.max_dim_cuda

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.max_op(x, self.dim)
