# corpus: problem=kb_l1_049_max_reduction device=cuda expect=accepted policy=both
# style: max mode
# class: 6
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

red_cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <vector>

// x viewed as (outer, R, inner); one thread per (outer, inner) pair walks R with stride inner, so a warp's loads
// are contiguous. op: 0 sum, 1 mean, 2 max, 3 min.
__global__ void reduce_middle_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t outer, int64_t R,
                                     int64_t inner, int op) {
    const int64_t total = outer * inner;
    for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < total; t += (int64_t)gridDim.x * blockDim.x) {
        const int64_t o = t / inner, i = t % inner;
        const float* p = x + o * R * inner + i;
        float acc = (op == 2) ? -INFINITY : (op == 3 ? INFINITY : 0.0f);
        for (int64_t r = 0; r < R; ++r) {
            const float v = p[r * inner];
            if (op == 2) acc = fmaxf(acc, v);
            else if (op == 3) acc = fminf(acc, v);
            else acc += v;
        }
        y[t] = (op == 1) ? acc / (float)R : acc;
    }
}

__global__ void argmax_middle_kernel(const float* __restrict__ x, int64_t* __restrict__ y, int64_t outer, int64_t R,
                                     int64_t inner) {
    const int64_t total = outer * inner;
    for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < total; t += (int64_t)gridDim.x * blockDim.x) {
        const int64_t o = t / inner, i = t % inner;
        const float* p = x + o * R * inner + i;
        float best = p[0];
        int64_t best_r = 0;
        for (int64_t r = 1; r < R; ++r) {
            const float v = p[r * inner];
            if (v > best) { best = v; best_r = r; }
        }
        y[t] = best_r;
    }
}

static void split_dims(const torch::Tensor& x, int64_t dim, int64_t& outer, int64_t& R, int64_t& inner,
                       std::vector<int64_t>& out_shape) {
    outer = 1; inner = 1;
    for (int64_t d = 0; d < x.dim(); ++d) {
        if (d < dim) outer *= x.size(d);
        if (d > dim) inner *= x.size(d);
        if (d != dim) out_shape.push_back(x.size(d));
    }
    R = x.size(dim);
}

torch::Tensor reduce_dim_cuda(torch::Tensor x, int64_t dim, int64_t op) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "float32 CUDA tensor expected");
    x = x.contiguous();
    if (dim < 0) dim += x.dim();
    int64_t outer, R, inner;
    std::vector<int64_t> shape;
    split_dims(x, dim, outer, R, inner, shape);
    auto y = torch::empty(shape, x.options());
    const int threads = 256;
    const int blocks = (int)std::max<int64_t>(1, std::min<int64_t>((outer * inner + threads - 1) / threads, 65535));
    reduce_middle_kernel<<<blocks, threads>>>(x.data_ptr<float>(), y.data_ptr<float>(), outer, R, inner, (int)op);
    cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "reduce_middle_kernel: ", cudaGetErrorString(err));
    return y;
}

torch::Tensor argmax_dim_cuda(torch::Tensor x, int64_t dim) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "float32 CUDA tensor expected");
    x = x.contiguous();
    if (dim < 0) dim += x.dim();
    int64_t outer, R, inner;
    std::vector<int64_t> shape;
    split_dims(x, dim, outer, R, inner, shape);
    auto y = torch::empty(shape, x.options().dtype(torch::kInt64));
    const int blocks = (int)std::max<int64_t>(1, std::min<int64_t>((outer * inner + 255) / 256, 65535));
    argmax_middle_kernel<<<blocks, 256>>>(x.data_ptr<float>(), y.data_ptr<int64_t>(), outer, R, inner);
    cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "argmax_middle_kernel: ", cudaGetErrorString(err));
    return y;
}
"""

red_cpp_source = """
torch::Tensor reduce_dim_cuda(torch::Tensor x, int64_t dim, int64_t op);
torch::Tensor argmax_dim_cuda(torch::Tensor x, int64_t dim);
"""

red = load_inline(
    name="dim_reduce_ext",
    cpp_sources=red_cpp_source,
    cuda_sources=red_cuda_source,
    functions=['reduce_dim_cuda', 'argmax_dim_cuda'],
    verbose=True,
    extra_cuda_cflags=["-O3", "--use_fast_math"],
)

class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return red.reduce_dim_cuda(x, self.dim, 2)
