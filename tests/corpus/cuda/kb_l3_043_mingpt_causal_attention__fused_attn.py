# corpus: problem=kb_l3_043_mingpt_causal_attention device=cuda expect=accepted policy=kernelbench
# style: nn.Linear projections, one fused causal attention kernel with dynamic shared memory
# class: 2,6
import math

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

attn_cpp = "torch::Tensor causal_attention_qkv(torch::Tensor qkv, int64_t n_head);"

attn_cuda = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAException.h>
#include <math.h>

__device__ __forceinline__ float warp_allreduce_sum(float v) {
    #pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
    return v;
}

__device__ __forceinline__ float warp_allreduce_max(float v) {
    #pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, o));
    return v;
}

template <bool IS_MAX>
__device__ float block_allreduce(float v, float* red) {
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int nwarps = blockDim.x >> 5;
    v = IS_MAX ? warp_allreduce_max(v) : warp_allreduce_sum(v);
    if (lane == 0) red[warp] = v;
    __syncthreads();
    if (warp == 0) {
        float t = lane < nwarps ? red[lane] : (IS_MAX ? -INFINITY : 0.0f);
        t = IS_MAX ? warp_allreduce_max(t) : warp_allreduce_sum(t);
        if (lane == 0) red[0] = t;
    }
    __syncthreads();
    const float r = red[0];
    __syncthreads();
    return r;
}

// qkv: (B, T, 3C) straight out of c_attn; y: (B, T, C) already in the "transpose back" layout.
// One block per (b*nh + h, query i). Scores for keys 0..i live in dynamic shared memory.
__global__ void causal_attention_kernel(const float* __restrict__ qkv, float* __restrict__ y,
                                        int T, int C, int nh, int hs, float scale) {
    extern __shared__ float smem[];
    float* q_s = smem;            // hs
    float* p_s = q_s + hs;        // T
    float* red = p_s + T;         // 32

    const int bh = blockIdx.x;
    const int b = bh / nh;
    const int h = bh % nh;
    const int i = blockIdx.y;
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int nwarps = blockDim.x >> 5;

    const size_t row_stride = (size_t)3 * C;
    const float* base = qkv + (size_t)b * T * row_stride + (size_t)h * hs;
    const float* q_row = base + (size_t)i * row_stride;
    const float* k_base = base + C;
    const float* v_base = base + 2 * (size_t)C;

    for (int d = threadIdx.x; d < hs; d += blockDim.x) q_s[d] = q_row[d];
    __syncthreads();

    const int L = i + 1;  // causal: keys 0..i
    float local_max = -INFINITY;
    for (int j = warp; j < L; j += nwarps) {
        const float* k_row = k_base + (size_t)j * row_stride;
        float dot = 0.0f;
        for (int d = lane; d < hs; d += 32) dot += q_s[d] * __ldg(k_row + d);
        dot = warp_allreduce_sum(dot) * scale;
        if (lane == 0) p_s[j] = dot;
        local_max = fmaxf(local_max, dot);
    }
    const float m = block_allreduce<true>(local_max, red);

    float local_sum = 0.0f;
    for (int j = threadIdx.x; j < L; j += blockDim.x) {
        const float e = __expf(p_s[j] - m);
        p_s[j] = e;
        local_sum += e;
    }
    const float inv = 1.0f / block_allreduce<false>(local_sum, red);

    float* y_row = y + ((size_t)b * T + i) * C + (size_t)h * hs;
    for (int d = threadIdx.x; d < hs; d += blockDim.x) {
        float acc = 0.0f;
        for (int j = 0; j < L; ++j) acc += p_s[j] * __ldg(v_base + (size_t)j * row_stride + d);
        y_row[d] = acc * inv;
    }
}

torch::Tensor causal_attention_qkv(torch::Tensor qkv, int64_t n_head) {
    TORCH_CHECK(qkv.is_cuda(), "qkv must be a CUDA tensor");
    TORCH_CHECK(qkv.dim() == 3, "qkv must be (B, T, 3C)");
    TORCH_CHECK(qkv.scalar_type() == torch::kFloat32, "float32 only");
    TORCH_CHECK(qkv.size(2) % 3 == 0, "last dim must be 3*C");
    const c10::cuda::CUDAGuard device_guard(qkv.device());

    auto x = qkv.contiguous();
    const int B = x.size(0);
    const int T = x.size(1);
    const int C = x.size(2) / 3;
    const int nh = (int)n_head;
    TORCH_CHECK(nh > 0 && C % nh == 0, "C must be divisible by n_head");
    const int hs = C / nh;

    auto y = torch::empty({B, T, C}, x.options());
    if (B == 0 || T == 0 || C == 0) return y;
    TORCH_CHECK(T <= 65535, "sequence too long for grid.y");

    const int threads = 128;
    const size_t shmem = (size_t)(hs + T + 32) * sizeof(float);
    TORCH_CHECK(shmem <= 48 * 1024, "sequence too long for the shared-memory score buffer");
    dim3 grid((unsigned)(B * nh), (unsigned)T);
    const float scale = 1.0f / sqrtf((float)hs);

    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    causal_attention_kernel<<<grid, threads, shmem, stream>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), T, C, nh, hs, scale);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

attn_ext = load_inline(
    name="kb_l3_043_mingpt_causal_attention__fused_attn",
    cpp_sources=attn_cpp,
    cuda_sources=attn_cuda,
    functions=["causal_attention_qkv"],
    extra_cuda_cflags=["-O3", "--use_fast_math"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, n_embd: int, n_head: int, attn_pdrop: float, resid_pdrop: float, max_seqlen: int):
        super().__init__()
        assert n_embd % n_head == 0
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.attn_dropout = nn.Dropout(attn_pdrop)  # p = 0 here; the fused kernel applies no dropout
        self.resid_dropout = nn.Dropout(resid_pdrop)
        self.register_buffer("bias", torch.tril(torch.ones(max_seqlen, max_seqlen)).view(1, 1, max_seqlen, max_seqlen))
        self.n_head = n_head
        self.n_embd = n_embd

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.size()
        assert T <= self.bias.size(-1)
        qkv = self.c_attn(x)  # (B, T, 3C), cuBLAS
        y = attn_ext.causal_attention_qkv(qkv, self.n_head)  # fused QK^T, causal softmax, @V
        return self.resid_dropout(self.c_proj(y))
