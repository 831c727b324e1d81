# corpus: problem=kb_l2_014_gemm_divide_sum_scaling device=cuda expect=accepted policy=kernelbench
# style: PyTorch .sum() in forward, custom row dot kernel
# class: 3
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

fold_cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

// sum_j (x @ W^T)[b, j] = x[b] . (sum_j W[j, :]): the GEMM folds into one column sum and one dot product per row.
__global__ void column_sum_kernel(const float* __restrict__ w, float* __restrict__ v, int rows, int cols) {
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    float acc = 0.0f;
    for (int r = 0; r < rows; ++r) acc += w[(int64_t)r * cols + c];
    v[c] = acc;
}

__global__ void rowdot_scale_kernel(const float* __restrict__ x, const float* __restrict__ v, float* __restrict__ y,
                                    int cols, float scale) {
    const float* row = x + (int64_t)blockIdx.x * cols;
    float acc = 0.0f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) acc += row[j] * v[j];
    __shared__ float sh[256];
    sh[threadIdx.x] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) sh[threadIdx.x] += sh[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) y[blockIdx.x] = sh[0] * scale;
}

torch::Tensor weight_column_sum(torch::Tensor w) {
    TORCH_CHECK(w.is_cuda() && w.dim() == 2, "2D CUDA weight");
    w = w.contiguous();
    auto v = torch::empty({w.size(1)}, w.options());
    const int cols = w.size(1);
    column_sum_kernel<<<(cols + 255) / 256, 256>>>(w.data_ptr<float>(), v.data_ptr<float>(), (int)w.size(0), cols);
    return v;
}

// Returns (B, 1): x (B, K) dotted with v (K), times scale.
torch::Tensor rowdot_scale(torch::Tensor x, torch::Tensor v, double scale) {
    TORCH_CHECK(x.is_cuda() && v.is_cuda() && x.size(1) == v.numel(), "x (B, K) and v (K) on CUDA");
    x = x.contiguous();
    auto y = torch::empty({x.size(0), 1}, x.options());
    rowdot_scale_kernel<<<(unsigned int)x.size(0), 256>>>(x.data_ptr<float>(), v.contiguous().data_ptr<float>(),
                                                          y.data_ptr<float>(), (int)x.size(1), (float)scale);
    cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "rowdot_scale_kernel: ", cudaGetErrorString(err));
    return y;
}
"""

fold_cpp_source = """
torch::Tensor weight_column_sum(torch::Tensor w);
torch::Tensor rowdot_scale(torch::Tensor x, torch::Tensor v, double scale);
"""

fold = load_inline(
    name="gemm_sum_fold_ext",
    cpp_sources=fold_cpp_source,
    cuda_sources=fold_cuda_source,
    functions=['weight_column_sum', 'rowdot_scale'],
    verbose=True,
    extra_cuda_cflags=["-O3", "--use_fast_math"],
)

class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_size, scaling_factor):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(hidden_size, input_size))
        self.scaling_factor = scaling_factor

    def forward(self, x):
        w_sum = self.weight.sum(dim=0)
        return fold.rowdot_scale(x, w_sum, self.scaling_factor * 0.5)
