# corpus: problem=kb_l1_004_matrix_vector_mult device=cpu expect=accepted policy=both
# style: torch.autograd.Function wrapper (PyTorch matmuls in its backward only) around an at::parallel_for kernel summing in double
# class: 2
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_src = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>

torch::Tensor matvec_forward(torch::Tensor A, torch::Tensor B) {
    TORCH_CHECK(A.dim() == 2, "A must be 2D");
    TORCH_CHECK(B.dim() == 2 && B.size(0) == A.size(1), "B must be (K, n)");
    TORCH_CHECK(A.scalar_type() == at::kFloat && B.scalar_type() == at::kFloat, "float32 only");
    auto a_c = A.contiguous();
    // B is (K, n); transpose so each output column reads a contiguous vector
    auto bt = B.t().contiguous();
    const int64_t M = a_c.size(0), K = a_c.size(1), n = bt.size(0);
    auto out = torch::empty({M, n}, A.options());
    const float* a = a_c.data_ptr<float>();
    const float* b = bt.data_ptr<float>();
    float* o = out.data_ptr<float>();

    at::parallel_for(0, M, 1, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
            const float* row = a + i * K;
            for (int64_t c = 0; c < n; ++c) {
                const float* vec = b + c * K;
                double acc0 = 0.0, acc1 = 0.0, acc2 = 0.0, acc3 = 0.0;
                int64_t k = 0;
                for (; k + 4 <= K; k += 4) {
                    acc0 += (double)row[k] * vec[k];
                    acc1 += (double)row[k + 1] * vec[k + 1];
                    acc2 += (double)row[k + 2] * vec[k + 2];
                    acc3 += (double)row[k + 3] * vec[k + 3];
                }
                for (; k < K; ++k) acc0 += (double)row[k] * vec[k];
                o[i * n + c] = (float)(acc0 + acc1 + acc2 + acc3);
            }
        }
    });
    return out;
}
"""

matvec_ext = load_inline(
    name="kb_l1_004_matrix_vector_mult__autograd_fn",
    cpp_sources=cpp_src,
    functions=["matvec_forward"],
    extra_cflags=["-O3"],
    verbose=False,
)


class MatVecFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, A, B):
        ctx.save_for_backward(A, B)
        return matvec_ext.matvec_forward(A, B)

    @staticmethod
    def backward(ctx, grad_out):
        A, B = ctx.saved_tensors
        grad_A = grad_B = None
        if ctx.needs_input_grad[0]:
            grad_A = grad_out @ B.t()
        if ctx.needs_input_grad[1]:
            grad_B = A.t() @ grad_out
        return grad_A, grad_B


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return MatVecFunction.apply(A, B)
