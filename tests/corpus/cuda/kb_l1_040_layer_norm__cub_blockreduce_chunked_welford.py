# corpus: problem=kb_l1_040_layer_norm device=cuda expect=accepted policy=both
# style: two kernels (chunk statistics, merge and normalise); cub::BlockReduce with a custom merge in double; AT_DISPATCH_FLOATING_TYPES; at::acc_type; __launch_bounds__; __ldg; CUDAGuard and the current stream; keeps self.ln (blind round 8)
# class: 2
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# LayerNorm over a very wide normalized shape (features*dim1*dim2 = 4M elements per row, only 16 rows).
# One block per row would leave most of the GPU idle, so each row is split into chunks:
#   pass 1: every block reduces one chunk to (count, mean, M2) with cub::BlockReduce
#   pass 2: every block merges all chunk statistics of its row (Chan's parallel formula, in double),
#           then normalizes its own chunk and applies the elementwise affine transform.

layer_norm_cuda_source = r"""
#include <torch/extension.h>
#include <ATen/AccumulateType.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cub/block/block_reduce.cuh>

constexpr int kThreads = 256;
constexpr int kItemsPerThread = 16;
constexpr int kChunk = kThreads * kItemsPerThread;   // elements handled by one block

template <typename scalar_t, typename acc_t>
__global__ void __launch_bounds__(kThreads)
ln_chunk_stats_kernel(const scalar_t* __restrict__ x,
                      float2* __restrict__ chunk_stats,      // (mean, M2) per chunk
                      int64_t row_len, int chunks_per_row) {
    using BlockReduce = cub::BlockReduce<acc_t, kThreads>;
    __shared__ typename BlockReduce::TempStorage temp;
    __shared__ acc_t s_mean;

    const int chunk = blockIdx.x;
    const int64_t row = blockIdx.y;
    const int64_t start = (int64_t)chunk * kChunk;
    const int64_t end = min(start + (int64_t)kChunk, row_len);
    const int count = (int)(end - start);
    const scalar_t* xr = x + row * row_len;

    acc_t vals[kItemsPerThread];
    acc_t local_sum = acc_t(0);
#pragma unroll
    for (int i = 0; i < kItemsPerThread; ++i) {
        const int64_t idx = start + (int64_t)i * kThreads + threadIdx.x;   // coalesced
        vals[i] = idx < end ? static_cast<acc_t>(__ldg(xr + idx)) : acc_t(0);
        local_sum += vals[i];
    }
    acc_t block_sum = BlockReduce(temp).Sum(local_sum);
    if (threadIdx.x == 0) s_mean = block_sum / static_cast<acc_t>(count);
    __syncthreads();
    const acc_t mean = s_mean;

    acc_t local_m2 = acc_t(0);
#pragma unroll
    for (int i = 0; i < kItemsPerThread; ++i) {
        const int64_t idx = start + (int64_t)i * kThreads + threadIdx.x;
        if (idx < end) {
            const acc_t d = vals[i] - mean;
            local_m2 += d * d;
        }
    }
    acc_t block_m2 = BlockReduce(temp).Sum(local_m2);
    if (threadIdx.x == 0) {
        chunk_stats[row * chunks_per_row + chunk] = make_float2((float)mean, (float)block_m2);
    }
}

struct WelfordAgg {
    double n, mean, m2;
};

struct WelfordMerge {
    __device__ __forceinline__ WelfordAgg operator()(const WelfordAgg& a, const WelfordAgg& b) const {
        const double n = a.n + b.n;
        if (n == 0.0) return WelfordAgg{0.0, 0.0, 0.0};
        const double delta = b.mean - a.mean;
        const double wb = b.n / n;
        return WelfordAgg{n, a.mean + delta * wb, a.m2 + b.m2 + delta * delta * a.n * wb};
    }
};

template <typename scalar_t, typename acc_t>
__global__ void __launch_bounds__(kThreads)
ln_normalize_kernel(const scalar_t* __restrict__ x,
                    const float2* __restrict__ chunk_stats,
                    const scalar_t* __restrict__ gamma,
                    const scalar_t* __restrict__ beta,
                    scalar_t* __restrict__ y,
                    int64_t row_len, int chunks_per_row, double eps) {
    using BlockReduce = cub::BlockReduce<WelfordAgg, kThreads>;
    __shared__ typename BlockReduce::TempStorage temp;
    __shared__ acc_t s_mean, s_rstd;

    const int chunk = blockIdx.x;
    const int64_t row = blockIdx.y;
    const float2* st = chunk_stats + row * chunks_per_row;

    WelfordAgg agg{0.0, 0.0, 0.0};
    WelfordMerge merge;
    for (int c = threadIdx.x; c < chunks_per_row; c += kThreads) {
        const int64_t c_start = (int64_t)c * kChunk;
        const double n = (double)min((int64_t)kChunk, row_len - c_start);
        const float2 s = st[c];
        agg = merge(agg, WelfordAgg{n, (double)s.x, (double)s.y});
    }
    WelfordAgg total = BlockReduce(temp).Reduce(agg, merge);
    if (threadIdx.x == 0) {
        const double var = total.m2 / total.n;          // biased variance, as nn.LayerNorm
        s_mean = static_cast<acc_t>(total.mean);
        s_rstd = static_cast<acc_t>(1.0 / sqrt(var + eps));
    }
    __syncthreads();
    const acc_t mean = s_mean;
    const acc_t rstd = s_rstd;

    const int64_t start = (int64_t)chunk * kChunk;
    const int64_t end = min(start + (int64_t)kChunk, row_len);
    const scalar_t* xr = x + row * row_len;
    scalar_t* yr = y + row * row_len;
#pragma unroll
    for (int i = 0; i < kItemsPerThread; ++i) {
        const int64_t idx = start + (int64_t)i * kThreads + threadIdx.x;
        if (idx < end) {
            acc_t v = (static_cast<acc_t>(__ldg(xr + idx)) - mean) * rstd;
            if (gamma != nullptr) v = v * static_cast<acc_t>(__ldg(gamma + idx));
            if (beta != nullptr) v = v + static_cast<acc_t>(__ldg(beta + idx));
            yr[idx] = static_cast<scalar_t>(v);
        }
    }
}

torch::Tensor layer_norm_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias,
                                 int64_t normalized_numel, double eps) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(normalized_numel > 0 && x.numel() % normalized_numel == 0,
                "input numel must be a multiple of the normalized shape numel");
    const c10::cuda::CUDAGuard device_guard(x.device());

    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    const int64_t row_len = normalized_numel;
    const int64_t rows = xc.numel() / row_len;
    if (rows == 0) return out;
    const int chunks_per_row = (int)((row_len + kChunk - 1) / kChunk);
    TORCH_CHECK(rows <= 65535, "too many rows for grid.y");

    const bool has_w = weight.defined() && weight.numel() > 0;
    const bool has_b = bias.defined() && bias.numel() > 0;
    torch::Tensor wc, bc;
    if (has_w) { TORCH_CHECK(weight.numel() == row_len, "weight shape mismatch"); wc = weight.contiguous().to(xc.dtype()); }
    if (has_b) { TORCH_CHECK(bias.numel() == row_len, "bias shape mismatch"); bc = bias.contiguous().to(xc.dtype()); }

    auto stats = torch::empty({rows, chunks_per_row, 2}, xc.options().dtype(torch::kFloat));
    dim3 grid(chunks_per_row, (unsigned)rows);
    auto stream = at::cuda::getCurrentCUDAStream();

    AT_DISPATCH_FLOATING_TYPES(xc.scalar_type(), "layer_norm_forward", [&] {
        using acc_t = at::acc_type<scalar_t, /*is_cuda=*/true>;
        ln_chunk_stats_kernel<scalar_t, acc_t><<<grid, kThreads, 0, stream>>>(
            xc.data_ptr<scalar_t>(), reinterpret_cast<float2*>(stats.data_ptr<float>()),
            row_len, chunks_per_row);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
        ln_normalize_kernel<scalar_t, acc_t><<<grid, kThreads, 0, stream>>>(
            xc.data_ptr<scalar_t>(), reinterpret_cast<const float2*>(stats.data_ptr<float>()),
            has_w ? wc.data_ptr<scalar_t>() : nullptr,
            has_b ? bc.data_ptr<scalar_t>() : nullptr,
            out.data_ptr<scalar_t>(), row_len, chunks_per_row, eps);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    });
    return out;
}
"""

layer_norm_cpp_source = r"""
torch::Tensor layer_norm_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias,
                                 int64_t normalized_numel, double eps);
"""

layer_norm_ext = load_inline(
    name="layer_norm_cub_ext",
    cpp_sources=layer_norm_cpp_source,
    cuda_sources=layer_norm_cuda_source,
    functions=["layer_norm_forward"],
    extra_cuda_cflags=["-O3", "--use_fast_math"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, normalized_shape: tuple):
        super().__init__()
        # Same module as the reference so parameters (weight=1, bias=0) and eps match exactly.
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)
        self.normalized_numel = 1
        for s in self.ln.normalized_shape:
            self.normalized_numel *= s

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = self.ln.weight if self.ln.weight is not None else torch.empty(0, device=x.device)
        b = self.ln.bias if self.ln.bias is not None else torch.empty(0, device=x.device)
        return layer_norm_ext.layer_norm_forward(x, w, b, self.normalized_numel, self.ln.eps)
