# corpus: problem=kb_l2_063_gemm_relu_divide device=cuda expect=accepted policy=both
# style: super().forward chain, a @property returning kernels keyed by string constants, tiled GEMM, warp shuffles, in-place float4 divide (blind round 12)
# class: 2
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Linear -> ReLU -> / divisor on CUDA.
#   gemm_bias_relu_tiled : shared-memory tiled GEMM, bias + ReLU fused in the epilogue
#   gemm_bias_relu_warp  : one warp per output element (for very small batches)
#   div_scalar_          : in-place division by the divisor (float4 grid-stride loop)

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime.h>

#define CHECK_CUDA_F32(t) \
    TORCH_CHECK((t).is_cuda(), #t " must be a CUDA tensor"); \
    TORCH_CHECK((t).scalar_type() == at::kFloat, #t " must be float32")

template <int TILE>
__global__ void __launch_bounds__(TILE * TILE)
gemm_bias_relu_tiled_kernel(const float* __restrict__ X, const float* __restrict__ W,
                            const float* __restrict__ B, float* __restrict__ Y,
                            int M, int N, int K) {
    __shared__ float xs[TILE][TILE + 1];
    __shared__ float ws[TILE][TILE + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;   // index into M
    const int col = blockIdx.x * TILE + tx;   // index into N
    const int wrow = blockIdx.x * TILE + ty;  // W row this thread loads
    float acc = 0.f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        const int k = k0 + tx;
        xs[ty][tx] = (row < M && k < K) ? __ldg(X + (size_t)row * K + k) : 0.f;
        ws[ty][tx] = (wrow < N && k < K) ? __ldg(W + (size_t)wrow * K + k) : 0.f;
        __syncthreads();
        #pragma unroll
        for (int kk = 0; kk < TILE; ++kk) acc += xs[ty][kk] * ws[tx][kk];
        __syncthreads();
    }
    if (row < M && col < N) {
        const float v = acc + __ldg(B + col);
        Y[(size_t)row * N + col] = v < 0.f ? 0.f : v;
    }
}

__global__ void gemm_bias_relu_warp_kernel(const float* __restrict__ X, const float* __restrict__ W,
                                           const float* __restrict__ B, float* __restrict__ Y,
                                           int64_t M, int64_t N, int64_t K) {
    const int64_t warp = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (warp >= M * N) return;   // uniform across the warp
    const int64_t m = warp / N, n = warp % N;
    const float* xr = X + m * K;
    const float* wr = W + n * K;
    float acc = 0.f;
    for (int64_t k = lane; k < K; k += 32) acc += __ldg(xr + k) * __ldg(wr + k);
    #pragma unroll
    for (int off = 16; off > 0; off >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, off);
    if (lane == 0) {
        const float v = acc + __ldg(B + n);
        Y[m * N + n] = v < 0.f ? 0.f : v;
    }
}

__global__ void div_scalar_vec4_kernel(float4* __restrict__ p, int64_t n4, float d) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4;
         i += (int64_t)gridDim.x * blockDim.x) {
        float4 v = p[i];
        v.x = v.x / d; v.y = v.y / d; v.z = v.z / d; v.w = v.w / d;
        p[i] = v;
    }
}

__global__ void div_scalar_kernel(float* __restrict__ p, int64_t start, int64_t n, float d) {
    for (int64_t i = start + (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        p[i] = p[i] / d;
    }
}

static void check_linear_args(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b) {
    CHECK_CUDA_F32(x); CHECK_CUDA_F32(w); CHECK_CUDA_F32(b);
    TORCH_CHECK(x.dim() == 2 && w.dim() == 2 && x.size(1) == w.size(1), "shape mismatch");
    TORCH_CHECK(b.numel() == w.size(0), "bias size mismatch");
}

torch::Tensor gemm_bias_relu_tiled(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
    check_linear_args(x, w, b);
    const c10::cuda::CUDAGuard guard(x.device());
    x = x.contiguous(); w = w.contiguous(); b = b.contiguous();
    const int M = (int)x.size(0), K = (int)x.size(1), N = (int)w.size(0);
    auto y = torch::empty({M, N}, x.options());
    if (M == 0 || N == 0) return y;
    constexpr int TILE = 16;
    dim3 block(TILE, TILE);
    dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
    auto stream = at::cuda::getCurrentCUDAStream();
    gemm_bias_relu_tiled_kernel<TILE><<<grid, block, 0, stream>>>(
        x.data_ptr<float>(), w.data_ptr<float>(), b.data_ptr<float>(), y.data_ptr<float>(), M, N, K);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}

torch::Tensor gemm_bias_relu_warp(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
    check_linear_args(x, w, b);
    const c10::cuda::CUDAGuard guard(x.device());
    x = x.contiguous(); w = w.contiguous(); b = b.contiguous();
    const int64_t M = x.size(0), K = x.size(1), N = w.size(0);
    auto y = torch::empty({M, N}, x.options());
    if (M == 0 || N == 0) return y;
    const int threads = 256;                       // 8 warps per block
    const int64_t warps = M * N;
    const int64_t blocks = (warps * 32 + threads - 1) / threads;
    auto stream = at::cuda::getCurrentCUDAStream();
    gemm_bias_relu_warp_kernel<<<(unsigned)blocks, threads, 0, stream>>>(
        x.data_ptr<float>(), w.data_ptr<float>(), b.data_ptr<float>(), y.data_ptr<float>(), M, N, K);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}

torch::Tensor div_scalar_(torch::Tensor y, double divisor) {
    CHECK_CUDA_F32(y);
    TORCH_CHECK(y.is_contiguous(), "div_scalar_: y must be contiguous");
    const c10::cuda::CUDAGuard guard(y.device());
    const int64_t n = y.numel();
    if (n == 0) return y;
    const float d = (float)divisor;
    auto stream = at::cuda::getCurrentCUDAStream();
    float* p = y.data_ptr<float>();
    const int threads = 256;
    int64_t done = 0;
    if ((reinterpret_cast<uintptr_t>(p) & 15) == 0) {
        const int64_t n4 = n / 4;
        if (n4 > 0) {
            const int blocks = (int)std::min<int64_t>((n4 + threads - 1) / threads, 65535);
            div_scalar_vec4_kernel<<<blocks, threads, 0, stream>>>(reinterpret_cast<float4*>(p), n4, d);
            C10_CUDA_KERNEL_LAUNCH_CHECK();
        }
        done = n4 * 4;
    }
    if (done < n) {
        const int blocks = (int)std::min<int64_t>((n - done + threads - 1) / threads, 65535);
        div_scalar_kernel<<<blocks, threads, 0, stream>>>(p, done, n, d);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    return y;
}
"""

cpp_source = r"""
#include <torch/extension.h>
torch::Tensor gemm_bias_relu_tiled(torch::Tensor x, torch::Tensor w, torch::Tensor b);
torch::Tensor gemm_bias_relu_warp(torch::Tensor x, torch::Tensor w, torch::Tensor b);
torch::Tensor div_scalar_(torch::Tensor y, double divisor);
"""

_ext = None


def _load():
    global _ext
    if _ext is None:
        _ext = load_inline(
            name="kb_gemm_relu_div_cuda",
            cpp_sources=cpp_source,
            cuda_sources=cuda_source,
            functions=["gemm_bias_relu_tiled", "gemm_bias_relu_warp", "div_scalar_"],
            extra_cuda_cflags=["-O3"],
            verbose=False,
        )
    return _ext


# kernel variants, chosen by name
TILED = "tiled"
WARP_PER_OUTPUT = "warp_per_output"
SMALL_BATCH = 8


class LinearReLU(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    @property
    def gemm_kernels(self):
        ext = _load()
        return {TILED: ext.gemm_bias_relu_tiled, WARP_PER_OUTPUT: ext.gemm_bias_relu_warp}

    def forward(self, x):
        variant = WARP_PER_OUTPUT if x.size(0) <= SMALL_BATCH else TILED
        return self.gemm_kernels[variant](x, self.linear.weight, self.linear.bias)


class ModelNew(LinearReLU):
    def __init__(self, in_features, out_features, divisor):
        super(ModelNew, self).__init__(in_features, out_features)
        self.divisor = divisor

    def forward(self, x):
        y = super().forward(x)
        return _load().div_scalar_(y, float(self.divisor))


batch_size = 1024
in_features = 8192
out_features = 8192
divisor = 2.0


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, divisor]
