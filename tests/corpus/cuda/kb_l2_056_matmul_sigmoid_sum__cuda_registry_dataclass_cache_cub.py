# corpus: problem=kb_l2_056_matmul_sigmoid_sum device=cuda expect=accepted policy=both
# style: functools.cache loader, @dataclass launch config, a @register dict, tiled GEMM with sigmoid, cub::BlockReduce row sum (blind round 12)
# class: 2
import functools
from dataclasses import dataclass

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Linear -> sigmoid -> sum(dim=1, keepdim=True) on CUDA, two kernels:
#   linear_sigmoid : tiled GEMM (templated tile), epilogue sigmoid(acc + bias)
#   row_sum_keepdim: one block per row, cub::BlockReduce

cuda_src = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cub/block/block_reduce.cuh>

template <int TILE>
__global__ void __launch_bounds__(TILE * TILE)
linear_sigmoid_kernel(const float* __restrict__ X, const float* __restrict__ W,
                      const float* __restrict__ B, float* __restrict__ S,
                      int M, int N, int K) {
    __shared__ float xs[TILE][TILE + 1];
    __shared__ float ws[TILE][TILE + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int m = blockIdx.y * TILE + ty;
    const int n = blockIdx.x * TILE + tx;
    const int wn = blockIdx.x * TILE + ty;
    float acc = 0.f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        const int k = k0 + tx;
        xs[ty][tx] = (m < M && k < K) ? X[(size_t)m * K + k] : 0.f;
        ws[ty][tx] = (wn < N && k < K) ? W[(size_t)wn * K + k] : 0.f;
        __syncthreads();
        #pragma unroll
        for (int kk = 0; kk < TILE; ++kk) acc += xs[ty][kk] * ws[tx][kk];
        __syncthreads();
    }
    if (m < M && n < N) {
        const float v = acc + B[n];
        S[(size_t)m * N + n] = 1.0f / (1.0f + expf(-v));
    }
}

template <int THREADS>
__global__ void __launch_bounds__(THREADS)
row_sum_kernel(const float* __restrict__ S, float* __restrict__ out, int64_t N) {
    using BlockReduce = cub::BlockReduce<float, THREADS>;
    __shared__ typename BlockReduce::TempStorage tmp;
    const float* row = S + (int64_t)blockIdx.x * N;
    float acc = 0.f;
    for (int64_t j = threadIdx.x; j < N; j += THREADS) acc += row[j];
    const float total = BlockReduce(tmp).Sum(acc);
    if (threadIdx.x == 0) out[blockIdx.x] = total;
}

torch::Tensor linear_sigmoid(torch::Tensor x, torch::Tensor w, torch::Tensor b, int64_t tile) {
    TORCH_CHECK(x.is_cuda() && w.is_cuda() && b.is_cuda(), "linear_sigmoid: CUDA tensors expected");
    TORCH_CHECK(x.scalar_type() == at::kFloat && w.scalar_type() == at::kFloat && b.scalar_type() == at::kFloat,
                "linear_sigmoid: float32 expected");
    TORCH_CHECK(x.dim() == 2 && w.dim() == 2 && x.size(1) == w.size(1) && b.numel() == w.size(0),
                "linear_sigmoid: shape mismatch");
    const c10::cuda::CUDAGuard guard(x.device());
    x = x.contiguous(); w = w.contiguous(); b = b.contiguous();
    const int M = (int)x.size(0), K = (int)x.size(1), N = (int)w.size(0);
    auto s = torch::empty({M, N}, x.options());
    if (M == 0 || N == 0) return s;
    auto stream = at::cuda::getCurrentCUDAStream();
    if (tile == 32) {
        dim3 block(32, 32), grid((N + 31) / 32, (M + 31) / 32);
        linear_sigmoid_kernel<32><<<grid, block, 0, stream>>>(
            x.data_ptr<float>(), w.data_ptr<float>(), b.data_ptr<float>(), s.data_ptr<float>(), M, N, K);
    } else {
        TORCH_CHECK(tile == 16, "linear_sigmoid: tile must be 16 or 32");
        dim3 block(16, 16), grid((N + 15) / 16, (M + 15) / 16);
        linear_sigmoid_kernel<16><<<grid, block, 0, stream>>>(
            x.data_ptr<float>(), w.data_ptr<float>(), b.data_ptr<float>(), s.data_ptr<float>(), M, N, K);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return s;
}

torch::Tensor row_sum_keepdim(torch::Tensor s, int64_t threads) {
    TORCH_CHECK(s.is_cuda() && s.scalar_type() == at::kFloat && s.dim() == 2, "row_sum_keepdim: 2-D CUDA float32");
    const c10::cuda::CUDAGuard guard(s.device());
    s = s.contiguous();
    const int64_t M = s.size(0), N = s.size(1);
    auto out = torch::empty({M, 1}, s.options());
    if (M == 0) return out;
    auto stream = at::cuda::getCurrentCUDAStream();
    switch (threads) {
        case 128: row_sum_kernel<128><<<(unsigned)M, 128, 0, stream>>>(s.data_ptr<float>(), out.data_ptr<float>(), N); break;
        case 256: row_sum_kernel<256><<<(unsigned)M, 256, 0, stream>>>(s.data_ptr<float>(), out.data_ptr<float>(), N); break;
        case 512: row_sum_kernel<512><<<(unsigned)M, 512, 0, stream>>>(s.data_ptr<float>(), out.data_ptr<float>(), N); break;
        default: TORCH_CHECK(false, "row_sum_keepdim: threads must be 128, 256 or 512");
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_src = r"""
#include <torch/extension.h>
torch::Tensor linear_sigmoid(torch::Tensor x, torch::Tensor w, torch::Tensor b, int64_t tile);
torch::Tensor row_sum_keepdim(torch::Tensor s, int64_t threads);
"""


@functools.cache
def load_kernels():
    return load_inline(
        name="kb_matmul_sigmoid_sum_cuda",
        cpp_sources=cpp_src,
        cuda_sources=cuda_src,
        functions=["linear_sigmoid", "row_sum_keepdim"],
        extra_cuda_cflags=["-O3"],
        verbose=False,
    )


@dataclass
class LaunchConfig:
    tile: int = 16             # GEMM tile edge (16 or 32)
    reduce_threads: int = 256  # threads per row in the row-sum kernel


KERNELS = {}


def register(name):
    def wrap(fn):
        KERNELS[name] = fn
        return fn
    return wrap


@register("linear_sigmoid")
def _linear_sigmoid(x, weight, bias, cfg: LaunchConfig):
    return load_kernels().linear_sigmoid(x, weight, bias, cfg.tile)


@register("row_sum")
def _row_sum(s, cfg: LaunchConfig):
    return load_kernels().row_sum_keepdim(s, cfg.reduce_threads)


class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_size):
        super(ModelNew, self).__init__()
        self.linear = nn.Linear(input_size, hidden_size)
        self.cfg = LaunchConfig()

    def forward(self, x):
        s = KERNELS["linear_sigmoid"](x, self.linear.weight, self.linear.bias, self.cfg)
        return KERNELS["row_sum"](s, self.cfg)


batch_size = 128
input_size = 32768
hidden_size = 32768


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
