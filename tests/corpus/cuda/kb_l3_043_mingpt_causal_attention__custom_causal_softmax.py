# corpus: problem=kb_l3_043_mingpt_causal_attention device=cuda expect=accepted policy=kernelbench
# style: matmuls by cuBLAS; scale, causal mask and softmax in one warp-per-row kernel in place
# class: 6
import math

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

causal_cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

// att is (B, nh, T, T); one warp per row. Row r (query position r % T) keeps keys 0..r: softmax(scale * att)
// over them, zeros after them (what masked_fill(-inf) + softmax gives). In place.
__global__ void causal_softmax_kernel(float* __restrict__ att, int64_t rows, int T, float scale) {
    const int64_t row = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x & 31;
    if (row >= rows) return;
    float* p = att + row * T;
    const int last = (int)(row % T);
    float m = -INFINITY;
    for (int j = lane; j <= last; j += 32) m = fmaxf(m, p[j] * scale);
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, o));
    float s = 0.0f;
    for (int j = lane; j <= last; j += 32) s += expf(p[j] * scale - m);
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffff, s, o);
    const float inv = 1.0f / s;
    for (int j = lane; j < T; j += 32) p[j] = j <= last ? expf(p[j] * scale - m) * inv : 0.0f;
}

torch::Tensor causal_scaled_softmax_(torch::Tensor att, double scale) {
    TORCH_CHECK(att.is_cuda() && att.is_contiguous() && att.dim() == 4, "contiguous (B, nh, T, T) CUDA tensor");
    const int T = att.size(3);
    TORCH_CHECK(att.size(2) == T, "square attention rows");
    const int64_t rows = att.numel() / T;
    const int threads = 256;
    const int64_t blocks = (rows * 32 + threads - 1) / threads;
    causal_softmax_kernel<<<(unsigned int)blocks, threads>>>(att.data_ptr<float>(), rows, T, (float)scale);
    cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "causal_softmax_kernel: ", cudaGetErrorString(err));
    return att;
}
"""

causal_cpp_source = """
torch::Tensor causal_scaled_softmax_(torch::Tensor att, double scale);
"""

causal = load_inline(
    name="causal_softmax_ext",
    cpp_sources=causal_cpp_source,
    cuda_sources=causal_cuda_source,
    functions=['causal_scaled_softmax_'],
    verbose=True,
    extra_cuda_cflags=["-O3", "--use_fast_math"],
)

class ModelNew(nn.Module):
    def __init__(self, n_embd, n_head, attn_pdrop, resid_pdrop, max_seqlen):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.attn_dropout = nn.Dropout(attn_pdrop)
        self.resid_dropout = nn.Dropout(resid_pdrop)
        self.register_buffer("bias", torch.tril(torch.ones(max_seqlen, max_seqlen)).view(1, 1, max_seqlen, max_seqlen))
        self.n_head = n_head
        self.n_embd = n_embd

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        hs = C // self.n_head
        q = q.view(B, T, self.n_head, hs).transpose(1, 2)
        k = k.view(B, T, self.n_head, hs).transpose(1, 2)
        v = v.view(B, T, self.n_head, hs).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)).contiguous()
        att = causal.causal_scaled_softmax_(att, 1.0 / math.sqrt(hs))
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)
