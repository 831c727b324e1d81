# corpus: problem=kb_l1_018_matmul_transposed_both device=cpu expect=accepted policy=both
# style: computes D = B @ A contiguous and returns the non-contiguous view d.t() (strides (1, M)), torch::empty + zero_() on its own fresh output, at::parallel_for with grain 4, AT_DISPATCH_FLOATING_TYPES over a template, functions=[...], module-level extension called in forward, __main__ self-test (blind round 15)
# class: 7, 8
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# C = A.T @ B.T with A: (K, M), B: (N, K).
# Note C.T = B @ A, and both B (N, K) and A (K, M) are row-major in the layout that
# product wants. So the kernel computes D = B @ A (shape (N, M), contiguous) and returns
# D.t(): a (M, N) view with strides (1, M). No transpose copy of either input or the output.

cpp_src = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <algorithm>

template <typename scalar_t>
static void rowmajor_gemm(const scalar_t* __restrict__ Bp,   // (N, K)
                          const scalar_t* __restrict__ Ap,   // (K, M)
                          scalar_t* __restrict__ Dp,         // (N, M), zero-filled
                          int64_t N, int64_t K, int64_t M) {
    constexpr int64_t KC = 256;
    // one task = a few rows of D; grain of 4 rows keeps tasks big enough
    at::parallel_for(0, N, /*grain_size=*/4, [&](int64_t n_begin, int64_t n_end) {
        for (int64_t k0 = 0; k0 < K; k0 += KC) {
            const int64_t k1 = std::min(K, k0 + KC);
            for (int64_t n = n_begin; n < n_end; ++n) {
                scalar_t* __restrict__ d = Dp + n * M;
                const scalar_t* __restrict__ brow = Bp + n * K;
                int64_t k = k0;
                // two k's at a time: halves the passes over the d row
                for (; k + 1 < k1; k += 2) {
                    const scalar_t b0 = brow[k], b1 = brow[k + 1];
                    const scalar_t* __restrict__ a0 = Ap + k * M;
                    const scalar_t* __restrict__ a1 = a0 + M;
                    #pragma omp simd
                    for (int64_t m = 0; m < M; ++m)
                        d[m] += b0 * a0[m] + b1 * a1[m];
                }
                for (; k < k1; ++k) {
                    const scalar_t b0 = brow[k];
                    const scalar_t* __restrict__ a0 = Ap + k * M;
                    #pragma omp simd
                    for (int64_t m = 0; m < M; ++m)
                        d[m] += b0 * a0[m];
                }
            }
        }
    });
}

torch::Tensor matmul_tt(const torch::Tensor& A, const torch::Tensor& B) {
    TORCH_CHECK(!A.is_cuda() && !B.is_cuda(), "matmul_tt is a CPU kernel");
    TORCH_CHECK(A.dim() == 2 && B.dim() == 2, "2-D inputs expected");
    TORCH_CHECK(A.size(0) == B.size(1), "A is (K, M), B is (N, K): K mismatch");
    TORCH_CHECK(A.scalar_type() == B.scalar_type(), "dtype mismatch");

    auto a = A.contiguous();
    auto b = B.contiguous();
    const int64_t K = a.size(0), M = a.size(1), N = b.size(0);

    auto d = torch::empty({N, M}, a.options());
    d.zero_();   // the kernel accumulates over k-panels

    AT_DISPATCH_FLOATING_TYPES(a.scalar_type(), "matmul_tt", [&] {
        rowmajor_gemm<scalar_t>(b.data_ptr<scalar_t>(), a.data_ptr<scalar_t>(),
                                d.data_ptr<scalar_t>(), N, K, M);
    });
    // (A^T B^T) = (B A)^T : hand back the transposed view
    return d.t();
}
"""

matmul_tt_ext = load_inline(
    name="kb_l1_018_matmul_tt_tview",
    cpp_sources=[cpp_src],
    functions=["matmul_tt"],
    extra_cflags=["-O3", "-march=native", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    verbose=False,
)


class ModelNew(nn.Module):
    """C = A.T @ B.T via a custom C++ GEMM that produces C.T contiguously."""

    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return matmul_tt_ext.matmul_tt(A, B)


M = 1024 * 2
K = 4096 * 2
N = 2048 * 2


def get_inputs():
    A = torch.rand(K, M)
    B = torch.rand(N, K)
    return [A, B]


def get_init_inputs():
    return []


if __name__ == "__main__":
    A = torch.rand(96, 40)
    B = torch.rand(24, 96)
    out = ModelNew()(A, B)
    ref = torch.matmul(A.T, B.T)
    print(out.shape, out.stride(), out.is_contiguous())
    print("max abs diff:", (out - ref).abs().max().item())
