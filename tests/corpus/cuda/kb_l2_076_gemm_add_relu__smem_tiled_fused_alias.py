# corpus: problem=kb_l2_076_gemm_add_relu device=cuda expect=accepted policy=both
# style: 128x128x8 double-buffered shared-memory GEMM, 8x8 per thread, bias + ReLU fused; self.op = ext.fn alias; cudaGetLastError; TORCH_CHECKs; module constants repeated (blind round 8)
# class: 1
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

batch_size = 1024
in_features = 8192
out_features = 8192
bias_shape = (out_features,)

gemm_bias_relu_cuda = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

// C[M,N] = relu(A[M,K] @ W[N,K]^T + bias[N])
// 128x128 block tile, BK = 8, 256 threads, each thread computes an 8x8 micro-tile.
#define BM 128
#define BN 128
#define BK 8
#define TM 8
#define TN 8
#define NTHREADS 256

__global__ void __launch_bounds__(NTHREADS)
gemm_bias_relu_kernel(const float* __restrict__ A, const float* __restrict__ W,
                      const float* __restrict__ bias, float* __restrict__ C,
                      int M, int N, int K) {
    // Both tiles are stored k-major so the inner product loop reads contiguous rows.
    __shared__ float As[2][BK][BM];
    __shared__ float Ws[2][BK][BN];

    const int tid = threadIdx.x;
    const int block_row = blockIdx.y * BM;
    const int block_col = blockIdx.x * BN;

    // Thread layout of the 16x16 thread grid over the 128x128 output tile.
    const int tr = tid / (BN / TN);   // 0..15
    const int tc = tid % (BN / TN);   // 0..15

    // Global->shared load mapping: each tile is 128 rows x 8 k-values = 1024 floats, 4 per thread.
    const int load_row = tid / 2;          // 0..127
    const int load_k = (tid % 2) * 4;      // 0 or 4

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.f;

    auto load_tiles = [&](int stage, int k0) {
        const int a_row = block_row + load_row;
        const int w_row = block_col + load_row;
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int k = k0 + load_k + i;
            As[stage][load_k + i][load_row] = (a_row < M && k < K) ? __ldg(A + (size_t)a_row * K + k) : 0.f;
            Ws[stage][load_k + i][load_row] = (w_row < N && k < K) ? __ldg(W + (size_t)w_row * K + k) : 0.f;
        }
    };

    const int num_k_tiles = (K + BK - 1) / BK;
    load_tiles(0, 0);
    __syncthreads();

    for (int t = 0; t < num_k_tiles; ++t) {
        const int cur = t & 1;
        if (t + 1 < num_k_tiles) load_tiles(cur ^ 1, (t + 1) * BK);   // prefetch next stage

#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            float a_frag[TM], w_frag[TN];
#pragma unroll
            for (int i = 0; i < TM; ++i) a_frag[i] = As[cur][kk][tr * TM + i];
#pragma unroll
            for (int j = 0; j < TN; ++j) w_frag[j] = Ws[cur][kk][tc * TN + j];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a_frag[i], w_frag[j], acc[i][j]);
        }
        __syncthreads();
    }

    // Fused epilogue: + bias, ReLU, store.
#pragma unroll
    for (int j = 0; j < TN; ++j) {
        const int col = block_col + tc * TN + j;
        if (col >= N) continue;
        const float b = __ldg(bias + col);
#pragma unroll
        for (int i = 0; i < TM; ++i) {
            const int row = block_row + tr * TM + i;
            if (row < M) C[(size_t)row * N + col] = fmaxf(acc[i][j] + b, 0.f);
        }
    }
}

torch::Tensor gemm_add_relu(torch::Tensor x, torch::Tensor weight, torch::Tensor bias) {
    TORCH_CHECK(x.is_cuda() && weight.is_cuda() && bias.is_cuda(), "all inputs must be CUDA tensors");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    TORCH_CHECK(weight.scalar_type() == torch::kFloat32 && bias.scalar_type() == torch::kFloat32,
                "weight/bias must be float32");
    TORCH_CHECK(x.dim() == 2 && weight.dim() == 2, "expected 2D x and weight");
    TORCH_CHECK(x.size(1) == weight.size(1), "in_features mismatch");
    TORCH_CHECK(bias.numel() == weight.size(0), "bias must have out_features elements");

    const c10::cuda::CUDAGuard guard(x.device());
    auto A = x.contiguous();
    auto W = weight.contiguous();
    auto b = bias.contiguous();
    const int M = A.size(0), K = A.size(1), N = W.size(0);
    auto C = torch::empty({M, N}, A.options());
    if (M == 0 || N == 0) return C;

    dim3 block(NTHREADS);
    dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
    gemm_bias_relu_kernel<<<grid, block, 0, at::cuda::getCurrentCUDAStream()>>>(
        A.data_ptr<float>(), W.data_ptr<float>(), b.data_ptr<float>(), C.data_ptr<float>(), M, N, K);
    cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "gemm_bias_relu_kernel launch failed: ", cudaGetErrorString(err));
    return C;
}
"""

gemm_bias_relu_cpp = "torch::Tensor gemm_add_relu(torch::Tensor x, torch::Tensor weight, torch::Tensor bias);"

gemm_ext = load_inline(
    name="gemm_add_relu_tiled",
    cpp_sources=gemm_bias_relu_cpp,
    cuda_sources=gemm_bias_relu_cuda,
    functions=["gemm_add_relu"],
    extra_cuda_cflags=["-O3", "--use_fast_math"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int, bias_shape: tuple):
        super().__init__()
        # Same construction order as the reference so the seeded weights match.
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.op = gemm_ext.gemm_add_relu

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.op(x, self.gemm.weight, self.bias)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, bias_shape]
