# corpus: problem=kb_l1_016_matmul_transposed_a device=cpu expect=accepted policy=both
# style: output from torch::from_blob over a 64-byte std::aligned_alloc buffer with a std::free deleter, hand-written PYBIND11_MODULE, self.matmul_tn = _ext.matmul_tn alias in __init__, OpenMP dynamic schedule over row blocks with a k-blocked omp simd AXPY, TORCH_CHECKs, -march=native, with_cuda=False (blind round 15)
# class: 1, 7, 8
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# C = A.T @ B with A: (K, M), B: (K, N).
# The product is computed straight from A's storage (no transpose copy): for a block of
# output rows m, we stream over k and do c[m, :] += A[k, m] * B[k, :], which keeps the
# inner loop unit-stride over both B and C. The output lives in a 64-byte aligned buffer
# from std::aligned_alloc, handed to PyTorch with torch::from_blob and a deleter that frees it.

M = 1024 * 2
K = 4096 * 2
N = 2048 * 2

cpp_source = r"""
#include <torch/extension.h>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <omp.h>

namespace {

constexpr int64_t MB = 16;    // output rows per task
constexpr int64_t KB = 128;   // k-panel

void matmul_tn_kernel(const float* __restrict__ A, const float* __restrict__ B,
                      float* __restrict__ C, int64_t M, int64_t K, int64_t N) {
    const int64_t nblk = (M + MB - 1) / MB;
    #pragma omp parallel for schedule(dynamic, 1)
    for (int64_t blk = 0; blk < nblk; ++blk) {
        const int64_t m0 = blk * MB;
        const int64_t m1 = std::min(M, m0 + MB);
        for (int64_t m = m0; m < m1; ++m)
            std::memset(C + m * N, 0, sizeof(float) * N);
        for (int64_t k0 = 0; k0 < K; k0 += KB) {
            const int64_t k1 = std::min(K, k0 + KB);
            for (int64_t m = m0; m < m1; ++m) {
                float* __restrict__ c = C + m * N;
                for (int64_t k = k0; k < k1; ++k) {
                    const float a = A[k * M + m];
                    const float* __restrict__ b = B + k * N;
                    #pragma omp simd
                    for (int64_t n = 0; n < N; ++n)
                        c[n] += a * b[n];
                }
            }
        }
    }
}

}  // namespace

torch::Tensor matmul_tn(torch::Tensor A, torch::Tensor B) {
    TORCH_CHECK(A.device().is_cpu() && B.device().is_cpu(), "matmul_tn: CPU tensors expected");
    TORCH_CHECK(A.scalar_type() == torch::kFloat32 && B.scalar_type() == torch::kFloat32,
                "matmul_tn: float32 expected");
    TORCH_CHECK(A.dim() == 2 && B.dim() == 2, "matmul_tn: 2-D inputs expected");
    TORCH_CHECK(A.size(0) == B.size(0), "matmul_tn: A.size(0) must equal B.size(0)");

    auto a = A.contiguous();
    auto b = B.contiguous();
    const int64_t K = a.size(0), M = a.size(1), N = b.size(1);

    // 64-byte aligned output; aligned_alloc wants a size that is a multiple of the alignment.
    size_t bytes = sizeof(float) * static_cast<size_t>(std::max<int64_t>(M * N, 1));
    bytes = (bytes + 63) / 64 * 64;
    void* mem = std::aligned_alloc(64, bytes);
    TORCH_CHECK(mem != nullptr, "matmul_tn: allocation of ", bytes, " bytes failed");

    auto out = torch::from_blob(
        mem, {M, N},
        [](void* p) { std::free(p); },
        torch::TensorOptions().dtype(torch::kFloat32).device(torch::kCPU));

    matmul_tn_kernel(a.data_ptr<float>(), b.data_ptr<float>(),
                     static_cast<float*>(mem), M, K, N);
    return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("matmul_tn", &matmul_tn, "C = A^T B (float32, OpenMP, aligned from_blob output)");
}
"""

_ext = load_inline(
    name="kb_l1_016_matmul_tn_fromblob",
    cpp_sources=cpp_source,
    extra_cflags=["-O3", "-march=native", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    with_cuda=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()
        self.matmul_tn = _ext.matmul_tn

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return self.matmul_tn(A, B)


def get_inputs():
    A = torch.rand(K, M)
    B = torch.rand(K, N)
    return [A, B]


def get_init_inputs():
    return []
