# corpus: problem=kb_l1_012_diag_matmul device=cuda expect=accepted policy=both
# style: algebraic shortcut (row scaling), grid-stride loop, default stream
# class: 6
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

diag_mm_cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

// diag(a) @ B scales row i of B by a[i]; the N x N diagonal matrix is never built.
__global__ void row_scale_kernel(const float* __restrict__ a, const float* __restrict__ B, float* __restrict__ C,
                                 int64_t rows, int64_t cols) {
    const int64_t total = rows * cols;
    for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += (int64_t)blockDim.x * gridDim.x) {
        C[idx] = a[idx / cols] * B[idx];
    }
}

torch::Tensor diag_matmul_cuda(torch::Tensor a, torch::Tensor B) {
    TORCH_CHECK(a.is_cuda() && B.is_cuda(), "inputs must live on the GPU");
    TORCH_CHECK(a.dim() == 1 && B.dim() == 2 && a.size(0) == B.size(0), "a (N,) and B (N, M) expected");
    auto Bc = B.contiguous();
    auto ac = a.contiguous();
    auto C = torch::empty_like(Bc);
    const int64_t rows = Bc.size(0), cols = Bc.size(1);
    const int threads = 256;
    const int blocks = (int)std::min<int64_t>((rows * cols + threads - 1) / threads, 8192);
    if (rows * cols > 0)
        row_scale_kernel<<<blocks, threads>>>(ac.data_ptr<float>(), Bc.data_ptr<float>(), C.data_ptr<float>(), rows, cols);
    return C;
}
"""

diag_mm_cpp_source = """
torch::Tensor diag_matmul_cuda(torch::Tensor a, torch::Tensor B);
"""

diag_mm = load_inline(
    name="diag_matmul_ext",
    cpp_sources=diag_mm_cpp_source,
    cuda_sources=diag_mm_cuda_source,
    functions=['diag_matmul_cuda'],
    verbose=True,
    extra_cuda_cflags=["-O3", "--use_fast_math"],
)

class ModelNew(nn.Module):
    """diag(A) @ B without materializing diag(A): each row of B scaled by A[i]."""

    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, A, B):
        return diag_mm.diag_matmul_cuda(A, B)
