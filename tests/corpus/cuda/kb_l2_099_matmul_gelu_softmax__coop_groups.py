# corpus: problem=kb_l2_099_matmul_gelu_softmax device=cuda expect=accepted policy=kernelbench
# style: torch.addmm, then cooperative groups fusing exact GELU and the row softmax into an out-kernel
# class: 3,6
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

gelu_softmax_cuda = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <cooperative_groups.h>
#include <math.h>

namespace cg = cooperative_groups;

struct MaxSum {
    float m;  // running max
    float s;  // sum of exp(v - m)
};

__device__ __forceinline__ MaxSum merge(MaxSum a, MaxSum b) {
    const float m = fmaxf(a.m, b.m);
    if (m == -INFINITY) return {m, 0.0f};
    return {m, a.s * __expf(a.m - m) + b.s * __expf(b.m - m)};
}

__device__ __forceinline__ float gelu_exact(float v) {
    return 0.5f * v * (1.0f + erff(v * 0.70710678118654752440f));
}

// One block per row: out = softmax(gelu(in)) along the row.
// Pass 1 writes gelu(in) into out and keeps an online (max, sum); pass 2 normalises out in place.
__global__ void gelu_softmax_rows_kernel(const float* __restrict__ in, float* __restrict__ out, int64_t cols) {
    __shared__ MaxSum warp_partials[32];
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);

    const float* row_in = in + (int64_t)blockIdx.x * cols;
    float* row_out = out + (int64_t)blockIdx.x * cols;

    MaxSum acc = {-INFINITY, 0.0f};
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
        const float g = gelu_exact(row_in[c]);
        row_out[c] = g;
        if (g > acc.m) {
            acc.s = acc.s * __expf(acc.m - g) + 1.0f;
            acc.m = g;
        } else {
            acc.s += __expf(g - acc.m);
        }
    }

    // warp-level merge
    for (int offset = warp.size() / 2; offset > 0; offset /= 2) {
        MaxSum other;
        other.m = warp.shfl_down(acc.m, offset);
        other.s = warp.shfl_down(acc.s, offset);
        acc = merge(acc, other);
    }
    const int warp_id = threadIdx.x / 32;
    const int num_warps = blockDim.x / 32;
    if (warp.thread_rank() == 0) warp_partials[warp_id] = acc;
    block.sync();

    if (warp_id == 0) {
        MaxSum t = (warp.thread_rank() < num_warps) ? warp_partials[warp.thread_rank()]
                                                     : MaxSum{-INFINITY, 0.0f};
        for (int offset = warp.size() / 2; offset > 0; offset /= 2) {
            MaxSum other;
            other.m = warp.shfl_down(t.m, offset);
            other.s = warp.shfl_down(t.s, offset);
            t = merge(t, other);
        }
        if (warp.thread_rank() == 0) warp_partials[0] = t;
    }
    block.sync();
    const float row_max = warp_partials[0].m;
    const float inv_sum = 1.0f / warp_partials[0].s;

    // each thread rereads exactly the columns it wrote in pass 1
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
        row_out[c] = __expf(row_out[c] - row_max) * inv_sum;
    }
}

void gelu_softmax_out(torch::Tensor input, torch::Tensor out) {
    TORCH_CHECK(input.is_cuda() && out.is_cuda(), "tensors must be on CUDA");
    TORCH_CHECK(input.scalar_type() == torch::kFloat32 && out.scalar_type() == torch::kFloat32,
                "float32 only");
    TORCH_CHECK(input.is_contiguous() && out.is_contiguous(), "tensors must be contiguous");
    TORCH_CHECK(input.sizes() == out.sizes(), "input/out shape mismatch");
    if (input.numel() == 0) return;
    const int64_t cols = input.size(-1);
    const int64_t rows = input.numel() / cols;

    const int threads = cols >= 4096 ? 512 : 256;
    auto stream = at::cuda::getCurrentCUDAStream();
    gelu_softmax_rows_kernel<<<(unsigned)rows, threads, 0, stream>>>(
        input.data_ptr<float>(), out.data_ptr<float>(), cols);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
}
"""

gelu_softmax_cpp = "void gelu_softmax_out(torch::Tensor input, torch::Tensor out);"

gelu_softmax_ext = load_inline(
    name="kb_l2_099_matmul_gelu_softmax__coop_groups",
    cpp_sources=gelu_softmax_cpp,
    cuda_sources=gelu_softmax_cuda,
    functions=["gelu_softmax_out"],
    extra_cuda_cflags=["-O3", "--use_fast_math"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # cuBLAS GEMM (+bias), then the fused GELU + row softmax kernel
        h = torch.addmm(self.linear.bias, x, self.linear.weight.t())
        out = torch.empty_like(h)
        gelu_softmax_ext.gelu_softmax_out(h, out)
        return out
