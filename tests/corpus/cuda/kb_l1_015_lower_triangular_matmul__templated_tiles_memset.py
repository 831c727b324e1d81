# corpus: problem=kb_l1_015_lower_triangular_matmul device=cuda expect=accepted policy=both
# style: heavily commented; kernel templated on BM/BN/BK/TM/TN; __launch_bounds__; dim3 grid; cudaMemsetAsync on the current stream; blocks above the diagonal exit early; CUDAGuard; #pragma unroll between brace-less loops
# class: 5,6
"""
C = tril(A @ B) for lower-triangular A and B.

For lower-triangular inputs C[i, j] = sum_{k=j}^{i} A[i, k] * B[k, j] (zero when i < j), so

  * output tiles that lie entirely above the diagonal are pure zeros -> we memset the output once on the
    current stream and those thread blocks exit immediately;
  * for a tile covering rows [r0, r0+BM) and columns [c0, c0+BN) only k in [c0, r0+BM) can contribute,
    so the K loop is shortened accordingly (about 1/3 of the dense FLOPs overall).
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

N = 4096

tril_cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

// Classic shared-memory tiled SGEMM, each thread owns a TM x TN register tile.
template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
tril_matmul_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int n) {
    constexpr int THREADS = (BM / TM) * (BN / TN);
    const int row0 = blockIdx.y * BM;
    const int col0 = blockIdx.x * BN;
    // Smallest column index in this tile exceeds the largest row index: the tile is strictly upper -> zeros
    // (already written by the memset).
    if (col0 > row0 + BM - 1) return;

    __shared__ float As[BK][BM];   // A tile stored k-major so the inner loop reads a row of As
    __shared__ float Bs[BK][BN];

    const int tid = threadIdx.x;
    const int tr = tid / (BN / TN);  // thread row within the block
    const int tc = tid % (BN / TN);  // thread col within the block

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.f;

    // Only k in [col0, row0 + BM) can be non-zero for lower-triangular operands.
    const int k_begin = (col0 / BK) * BK;
    const int k_end = min(n, row0 + BM);

    for (int k0 = k_begin; k0 < k_end; k0 += BK) {
        for (int idx = tid; idx < BM * BK; idx += THREADS) {
            const int r = idx / BK, c = idx % BK;
            const int gr = row0 + r, gk = k0 + c;
            As[c][r] = (gr < n && gk < n) ? __ldg(A + (size_t)gr * n + gk) : 0.f;
        }
        for (int idx = tid; idx < BK * BN; idx += THREADS) {
            const int r = idx / BN, c = idx % BN;
            const int gk = k0 + r, gc = col0 + c;
            Bs[r][c] = (gk < n && gc < n) ? __ldg(B + (size_t)gk * n + gc) : 0.f;
        }
        __syncthreads();

#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            float a[TM], b[TN];
#pragma unroll
            for (int i = 0; i < TM; ++i) a[i] = As[kk][tr * TM + i];
#pragma unroll
            for (int j = 0; j < TN; ++j) b[j] = Bs[kk][tc * TN + j];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }

    // Write back only the lower part (i >= j); the rest stays zero from the memset.
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int gr = row0 + tr * TM + i;
        if (gr >= n) continue;
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int gc = col0 + tc * TN + j;
            if (gc < n && gc <= gr) C[(size_t)gr * n + gc] = acc[i][j];
        }
    }
}

torch::Tensor tril_matmul(torch::Tensor A, torch::Tensor B) {
    TORCH_CHECK(A.is_cuda() && B.is_cuda(), "inputs must be CUDA tensors");
    TORCH_CHECK(A.dim() == 2 && B.dim() == 2, "inputs must be 2-D");
    TORCH_CHECK(A.size(0) == A.size(1) && B.size(0) == B.size(1) && A.size(0) == B.size(0),
                "inputs must be square matrices of the same size");
    TORCH_CHECK(A.scalar_type() == at::kFloat && B.scalar_type() == at::kFloat, "float32 only");
    c10::cuda::CUDAGuard guard(A.device());

    auto a = A.contiguous();
    auto b = B.contiguous();
    const int n = (int)a.size(0);
    auto c = torch::empty({n, n}, a.options());
    if (n == 0) return c;

    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    // Zero the whole output; blocks above the diagonal then have nothing to do.
    C10_CUDA_CHECK(cudaMemsetAsync(c.data_ptr<float>(), 0, sizeof(float) * (size_t)n * n, stream));

    constexpr int BM = 64, BN = 64, BK = 16, TM = 4, TN = 4;
    dim3 block((BM / TM) * (BN / TN));
    dim3 grid((n + BN - 1) / BN, (n + BM - 1) / BM);
    tril_matmul_kernel<BM, BN, BK, TM, TN><<<grid, block, 0, stream>>>(
        a.data_ptr<float>(), b.data_ptr<float>(), c.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return c;
}
"""

tril_cpp_source = "torch::Tensor tril_matmul(torch::Tensor A, torch::Tensor B);"

tril_ext = load_inline(
    name="tril_matmul_ext",
    cpp_sources=tril_cpp_source,
    cuda_sources=tril_cuda_source,
    functions=["tril_matmul"],
    extra_cuda_cflags=["-O3", "--use_fast_math"],
    verbose=False,
)


class ModelNew(nn.Module):
    """Lower-triangular matmul with a custom CUDA kernel that skips the zero half."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return tril_ext.tril_matmul(A, B)
