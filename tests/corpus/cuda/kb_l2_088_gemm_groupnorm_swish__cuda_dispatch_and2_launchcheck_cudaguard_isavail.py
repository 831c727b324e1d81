# corpus: problem=kb_l2_088_gemm_groupnorm_swish device=cuda expect=accepted policy=both
# style: extension built under torch.cuda.is_available(), AT_DISPATCH_FLOATING_TYPES_AND2(Half, BFloat16), at::opmath_type, shared-memory tiled GEMM with bias, then a warp-per-(row, group) GroupNorm + Swish + multiply + Swish kernel in place on its output, --use_fast_math, CUDAGuard + current stream, C10_CUDA_KERNEL_LAUNCH_CHECK (blind round 13)
# class: 8
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/OpMathType.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAException.h>

#define TILE_M 64
#define TILE_N 64
#define TILE_K 16
#define THREADS 256

// ---------------------------------------------------------------------------
// Y[M, N] = X[M, K] * W[N, K]^T + bias[N]   (nn.Linear layout), 4x4 per thread
// ---------------------------------------------------------------------------
template <typename scalar_t>
__global__ void __launch_bounds__(THREADS)
linear_tiled_kernel(const scalar_t* __restrict__ X, const scalar_t* __restrict__ W,
                    const scalar_t* __restrict__ bias, scalar_t* __restrict__ Y,
                    int M, int N, int K) {
    using acc_t = at::opmath_type<scalar_t>;
    __shared__ acc_t As[TILE_K][TILE_M + 4];
    __shared__ acc_t Bs[TILE_K][TILE_N + 4];

    const int tid = threadIdx.x;
    const int tx = tid % 16;          // column group
    const int ty = tid / 16;          // row group
    const int row0 = blockIdx.y * TILE_M;
    const int col0 = blockIdx.x * TILE_N;

    acc_t acc[4][4];
    #pragma unroll
    for (int i = 0; i < 4; ++i)
        #pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = acc_t(0);

    for (int k0 = 0; k0 < K; k0 += TILE_K) {
        // 64x16 tile of X and 64x16 tile of W: 1024 elements each, 4 per thread
        #pragma unroll
        for (int r = 0; r < 4; ++r) {
            const int idx = tid + r * THREADS;   // 0..1023
            const int m = idx / TILE_K;
            const int k = idx % TILE_K;
            const int gm = row0 + m, gn = col0 + m, gk = k0 + k;
            As[k][m] = (gm < M && gk < K) ? static_cast<acc_t>(X[(int64_t)gm * K + gk]) : acc_t(0);
            Bs[k][m] = (gn < N && gk < K) ? static_cast<acc_t>(W[(int64_t)gn * K + gk]) : acc_t(0);
        }
        __syncthreads();

        #pragma unroll
        for (int k = 0; k < TILE_K; ++k) {
            acc_t a[4], b[4];
            #pragma unroll
            for (int i = 0; i < 4; ++i) a[i] = As[k][ty + 16 * i];
            #pragma unroll
            for (int j = 0; j < 4; ++j) b[j] = Bs[k][tx + 16 * j];
            #pragma unroll
            for (int i = 0; i < 4; ++i)
                #pragma unroll
                for (int j = 0; j < 4; ++j) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }

    #pragma unroll
    for (int i = 0; i < 4; ++i) {
        const int gm = row0 + ty + 16 * i;
        if (gm >= M) continue;
        #pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int gn = col0 + tx + 16 * j;
            if (gn < N) {
                acc_t v = acc[i][j];
                if (bias != nullptr) v += static_cast<acc_t>(bias[gn]);
                Y[(int64_t)gm * N + gn] = static_cast<scalar_t>(v);
            }
        }
    }
}

// ---------------------------------------------------------------------------
// One warp per (row, group): GroupNorm (two-pass) -> swish -> *w -> swish
// ---------------------------------------------------------------------------
template <typename T>
__device__ __forceinline__ T warp_sum(T v) {
    #pragma unroll
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

template <typename scalar_t>
__global__ void groupnorm_swish_mul_swish_kernel(scalar_t* __restrict__ Y,
                                                 const scalar_t* __restrict__ gamma,
                                                 const scalar_t* __restrict__ beta,
                                                 const scalar_t* __restrict__ mul_w,
                                                 int M, int N, int G, float eps) {
    using acc_t = at::opmath_type<scalar_t>;
    const int warps_per_block = blockDim.x / 32;
    const int warp = blockIdx.x * warps_per_block + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (warp >= M * G) return;

    const int row = warp / G;
    const int g = warp % G;
    const int cpg = N / G;
    scalar_t* base = Y + (int64_t)row * N + (int64_t)g * cpg;

    acc_t s = 0;
    for (int c = lane; c < cpg; c += 32) s += static_cast<acc_t>(base[c]);
    const acc_t mean = warp_sum(s) / static_cast<acc_t>(cpg);

    acc_t sq = 0;
    for (int c = lane; c < cpg; c += 32) {
        const acc_t d = static_cast<acc_t>(base[c]) - mean;
        sq += d * d;
    }
    const acc_t var = warp_sum(sq) / static_cast<acc_t>(cpg);
    const acc_t rstd = rsqrtf(static_cast<float>(var) + eps);

    for (int c = lane; c < cpg; c += 32) {
        const int ch = g * cpg + c;
        acc_t v = (static_cast<acc_t>(base[c]) - mean) * rstd;
        v = v * static_cast<acc_t>(gamma[ch]) + static_cast<acc_t>(beta[ch]);
        v = v / (acc_t(1) + expf(-v));                      // swish
        v = v * static_cast<acc_t>(mul_w[ch]);
        v = v / (acc_t(1) + expf(-v));                      // swish
        base[c] = static_cast<scalar_t>(v);
    }
}

torch::Tensor gemm_groupnorm_swish(torch::Tensor x, torch::Tensor weight, torch::Tensor bias,
                                   torch::Tensor gn_weight, torch::Tensor gn_bias,
                                   torch::Tensor mul_weight, int64_t num_groups, double eps) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(weight.is_cuda() && bias.is_cuda(), "linear params must be CUDA tensors");
    TORCH_CHECK(x.dim() == 2 && weight.dim() == 2 && x.size(1) == weight.size(1), "bad shapes");
    TORCH_CHECK(weight.size(0) % num_groups == 0, "out_features must be divisible by num_groups");
    const c10::cuda::CUDAGuard device_guard(x.device());

    auto xc = x.contiguous();
    auto wc = weight.contiguous();
    auto bc = bias.contiguous();
    auto gw = gn_weight.contiguous();
    auto gb = gn_bias.contiguous();
    auto mw = mul_weight.contiguous();

    const int M = xc.size(0), K = xc.size(1), N = wc.size(0);
    auto y = torch::empty({M, N}, xc.options());
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();

    AT_DISPATCH_FLOATING_TYPES_AND2(at::ScalarType::Half, at::ScalarType::BFloat16,
                                    xc.scalar_type(), "gemm_groupnorm_swish", [&] {
        dim3 grid((N + TILE_N - 1) / TILE_N, (M + TILE_M - 1) / TILE_M);
        linear_tiled_kernel<scalar_t><<<grid, THREADS, 0, stream>>>(
            xc.data_ptr<scalar_t>(), wc.data_ptr<scalar_t>(), bc.data_ptr<scalar_t>(),
            y.data_ptr<scalar_t>(), M, N, K);
        C10_CUDA_KERNEL_LAUNCH_CHECK();

        const int G = static_cast<int>(num_groups);
        const int warps = M * G;
        const int threads = 256;
        const int blocks = (warps * 32 + threads - 1) / threads;
        groupnorm_swish_mul_swish_kernel<scalar_t><<<blocks, threads, 0, stream>>>(
            y.data_ptr<scalar_t>(), gw.data_ptr<scalar_t>(), gb.data_ptr<scalar_t>(),
            mw.data_ptr<scalar_t>(), M, N, G, static_cast<float>(eps));
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    });
    return y;
}
"""

cpp_src = r"""
#include <torch/extension.h>
torch::Tensor gemm_groupnorm_swish(torch::Tensor x, torch::Tensor weight, torch::Tensor bias,
                                   torch::Tensor gn_weight, torch::Tensor gn_bias,
                                   torch::Tensor mul_weight, int64_t num_groups, double eps);
"""

fused_ext = None
if torch.cuda.is_available():
    fused_ext = load_inline(
        name="kb_l2_088_gemm_groupnorm_swish__cuda_dispatch_and2_launchcheck_cudaguard_isavail",
        cpp_sources=cpp_src,
        cuda_sources=cuda_src,
        functions=["gemm_groupnorm_swish"],
        extra_cuda_cflags=["-O3", "--use_fast_math"],
        verbose=False,
    )


class ModelNew(nn.Module):
    """GEMM -> GroupNorm -> Swish -> Multiply -> Swish, with two CUDA kernels."""

    def __init__(self, in_features, out_features, num_groups, multiply_weight_shape):
        super(ModelNew, self).__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.group_norm = nn.GroupNorm(num_groups, out_features)
        self.multiply_weight = nn.Parameter(torch.randn(multiply_weight_shape))

    def forward(self, x):
        return fused_ext.gemm_groupnorm_swish(
            x, self.gemm.weight, self.gemm.bias,
            self.group_norm.weight, self.group_norm.bias, self.multiply_weight,
            self.group_norm.num_groups, self.group_norm.eps,
        )


batch_size = 1024
in_features = 8192
out_features = 8192
num_groups = 256
multiply_weight_shape = (out_features,)


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, num_groups, multiply_weight_shape]
