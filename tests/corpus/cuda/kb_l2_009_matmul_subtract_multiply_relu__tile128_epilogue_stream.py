# corpus: problem=kb_l2_009_matmul_subtract_multiply_relu device=cuda expect=accepted policy=both
# style: heavily commented; 128x128 tiles, 8x8 per thread; padded shared memory; fused bias/subtract/multiply/ReLU epilogue; at::cuda::CUDAStream; c10::optional bias; nn.Linear weights; #pragma unroll between brace-less loops
# class: 6
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# ----------------------------------------------------------------------------------------------
# Fused  y = relu((x @ W^T + b - subtract_value) * multiply_value)
#
# x: [M, K] row-major, W: [N, K] row-major (nn.Linear layout), so both operands are K-contiguous.
# One thread block computes a 128 x 128 tile of y with 256 threads, each thread an 8 x 8 register
# tile; K is walked in slices of 8 through shared memory.  The bias / subtract / multiply / ReLU
# epilogue is applied to the accumulators before the single global store.
# ----------------------------------------------------------------------------------------------
cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

namespace {

constexpr int BM = 128;
constexpr int BN = 128;
constexpr int BK = 8;
constexpr int TM = 8;
constexpr int TN = 8;
constexpr int NUM_THREADS = (BM / TM) * (BN / TN);   // 256

__global__ void __launch_bounds__(NUM_THREADS)
linear_sub_mul_relu_kernel(const float* __restrict__ x,      // [M, K]
                           const float* __restrict__ w,      // [N, K]
                           const float* __restrict__ bias,   // [N] or nullptr
                           float* __restrict__ y,            // [M, N]
                           int M, int N, int K, float sub, float mul) {
    // Shared tiles are stored K-major ([BK][BM]) so that the compute loop reads contiguous rows.
    // The +4 padding on the inner dimension breaks bank conflicts of the transposing stores.
    __shared__ float As[BK][BM + 4];
    __shared__ float Bs[BK][BN + 4];

    const int tid = threadIdx.x;
    const int block_m = blockIdx.y * BM;
    const int block_n = blockIdx.x * BN;
    const int thread_m = (tid / (BN / TN)) * TM;   // first row of this thread's 8x8 tile
    const int thread_n = (tid % (BN / TN)) * TN;   // first col of this thread's 8x8 tile

    float acc[TM][TN];
    #pragma unroll
    for (int i = 0; i < TM; ++i)
        #pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += BK) {
        // ---- global -> shared: each of the 256 threads moves 4 elements of A and 4 of B ----
        #pragma unroll
        for (int l = 0; l < (BM * BK) / NUM_THREADS; ++l) {
            const int idx = tid + l * NUM_THREADS;
            const int r = idx / BK;          // row inside the tile
            const int c = idx % BK;          // k inside the slice
            const int gm = block_m + r, gk = k0 + c;
            As[c][r] = (gm < M && gk < K) ? __ldg(&x[(size_t)gm * K + gk]) : 0.0f;
        }
        #pragma unroll
        for (int l = 0; l < (BN * BK) / NUM_THREADS; ++l) {
            const int idx = tid + l * NUM_THREADS;
            const int r = idx / BK;
            const int c = idx % BK;
            const int gn = block_n + r, gk = k0 + c;
            Bs[c][r] = (gn < N && gk < K) ? __ldg(&w[(size_t)gn * K + gk]) : 0.0f;
        }
        __syncthreads();

        // ---- outer-product accumulation on registers ----
        #pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            float a_frag[TM], b_frag[TN];
            #pragma unroll
            for (int i = 0; i < TM; ++i) a_frag[i] = As[kk][thread_m + i];
            #pragma unroll
            for (int j = 0; j < TN; ++j) b_frag[j] = Bs[kk][thread_n + j];
            #pragma unroll
            for (int i = 0; i < TM; ++i)
                #pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a_frag[i], b_frag[j], acc[i][j]);
        }
        __syncthreads();
    }

    // ---- fused epilogue: + bias, - sub, * mul, ReLU ----
    #pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int gm = block_m + thread_m + i;
        if (gm >= M) continue;
        #pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int gn = block_n + thread_n + j;
            if (gn >= N) continue;
            float v = acc[i][j];
            if (bias != nullptr) v += bias[gn];
            v = (v - sub) * mul;
            y[(size_t)gm * N + gn] = v > 0.0f ? v : 0.0f;
        }
    }
}

}  // namespace

torch::Tensor linear_sub_mul_relu(torch::Tensor x, torch::Tensor weight, c10::optional<torch::Tensor> bias,
                                  double subtract_value, double multiply_value) {
    TORCH_CHECK(x.is_cuda() && weight.is_cuda(), "expected CUDA tensors");
    TORCH_CHECK(x.scalar_type() == at::kFloat && weight.scalar_type() == at::kFloat, "expected float32");
    TORCH_CHECK(x.dim() == 2 && weight.dim() == 2 && x.size(1) == weight.size(1), "shape mismatch");
    c10::cuda::CUDAGuard guard(x.device());

    auto xc = x.contiguous();
    auto wc = weight.contiguous();
    const int M = (int)xc.size(0), K = (int)xc.size(1), N = (int)wc.size(0);
    auto y = at::empty({M, N}, xc.options());
    if (M == 0 || N == 0) return y;

    const float* bptr = nullptr;
    torch::Tensor bc;
    if (bias.has_value() && bias->defined()) {
        bc = bias->contiguous();
        TORCH_CHECK(bc.numel() == N, "bias size mismatch");
        bptr = bc.data_ptr<float>();
    }

    at::cuda::CUDAStream stream = at::cuda::getCurrentCUDAStream();
    dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
    dim3 block(NUM_THREADS);
    linear_sub_mul_relu_kernel<<<grid, block, 0, stream.stream()>>>(
        xc.data_ptr<float>(), wc.data_ptr<float>(), bptr, y.data_ptr<float>(), M, N, K,
        (float)subtract_value, (float)multiply_value);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = """
torch::Tensor linear_sub_mul_relu(torch::Tensor x, torch::Tensor weight, c10::optional<torch::Tensor> bias,
                                  double subtract_value, double multiply_value);
"""

fused_ext = load_inline(
    name="linear_sub_mul_relu_ext",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["linear_sub_mul_relu"],
    extra_cuda_cflags=["-O3", "--use_fast_math"],
    verbose=False,
)


class ModelNew(nn.Module):
    """Linear -> subtract -> multiply -> ReLU in one custom CUDA kernel."""

    def __init__(self, in_features: int, out_features: int, subtract_value: float, multiply_value: float):
        super().__init__()
        # Keep nn.Linear so that parameter names and initialisation match the reference model.
        self.linear = nn.Linear(in_features, out_features)
        self.subtract_value = subtract_value
        self.multiply_value = multiply_value

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return fused_ext.linear_sub_mul_relu(x, self.linear.weight, self.linear.bias,
                                             float(self.subtract_value), float(self.multiply_value))
