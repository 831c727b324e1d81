# corpus: problem=kb_l1_001_square_matmul device=cpu expect=accepted policy=both
# style: the kernel wrapped in a torch.autograd.Function whose forward calls the extension; ModelNew calls .apply
# class: 2
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>

// C = A @ B for row-major float matrices: i-k-j order so the inner loop streams rows of B and C; row blocks of C
// are split across threads.
torch::Tensor square_matmul(torch::Tensor A, torch::Tensor B) {
    TORCH_CHECK(A.dim() == 2 && B.dim() == 2, "square_matmul: 2-D tensors expected");
    TORCH_CHECK(A.size(1) == B.size(0), "square_matmul: inner sizes differ (", A.size(1), " vs ", B.size(0), ")");
    TORCH_CHECK(A.scalar_type() == torch::kFloat && B.scalar_type() == torch::kFloat, "square_matmul: float32 only");
    auto a = A.contiguous();
    auto b = B.contiguous();
    const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
    auto c = torch::zeros({M, N}, a.options());
    const float* pa = a.data_ptr<float>();
    const float* pb = b.data_ptr<float>();
    float* pc = c.data_ptr<float>();
    at::parallel_for(0, M, 16, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) {
            float* crow = pc + i * N;
            for (int64_t k = 0; k < K; ++k) {
                const float aik = pa[i * K + k];
                const float* brow = pb + k * N;
                for (int64_t j = 0; j < N; ++j) crow[j] += aik * brow[j];
            }
        }
    });
    return c;
}
"""

mm = load_inline(
    name="corpus_square_matmul_cpu",
    cpp_sources=CPP,
    functions=["square_matmul"],
    extra_cflags=["-O3"],
)


class SquareMatmul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, A, B):
        return mm.square_matmul(A, B)

    @staticmethod
    def backward(ctx, grad):
        raise NotImplementedError("inference only")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return SquareMatmul.apply(A, B)
