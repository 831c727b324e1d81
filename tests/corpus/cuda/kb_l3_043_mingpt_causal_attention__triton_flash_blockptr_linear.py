# corpus: problem=kb_l3_043_mingpt_causal_attention device=cuda expect=accepted policy=kernelbench
# style: Triton flash attention with block pointers (make_block_ptr/advance, zero padding for head_dim 96), exp2 online softmax, reads q/k/v from c_attn's output; c_attn/c_proj stay nn.Linear; register_buffer kept (blind round 8; tl.dot made IEEE fp32, as TF32 exceeds an fp32 problem's budget)
# class: 2
import math

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def causal_flash_attn_fwd(
    qkv_ptr, out_ptr,
    T, n_head, C, head_dim,
    stride_qkv_b, stride_qkv_t,
    stride_o_b, stride_o_t,
    qk_scale,                       # 1/sqrt(head_dim) * log2(e)
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
):
    start_m = tl.program_id(0)
    off_bh = tl.program_id(1)
    b = off_bh // n_head
    h = off_bh % n_head

    # q, k, v are read straight out of the fused c_attn output (B, T, 3C): no split/transpose copies.
    q_base = qkv_ptr + b * stride_qkv_b + h * head_dim
    k_base = q_base + C
    v_base = q_base + 2 * C

    Q_block = tl.make_block_ptr(base=q_base, shape=(T, head_dim), strides=(stride_qkv_t, 1),
                                offsets=(start_m * BLOCK_M, 0), block_shape=(BLOCK_M, BLOCK_D), order=(1, 0))
    # K is read transposed: (head_dim, T)
    K_block = tl.make_block_ptr(base=k_base, shape=(head_dim, T), strides=(1, stride_qkv_t),
                                offsets=(0, 0), block_shape=(BLOCK_D, BLOCK_N), order=(0, 1))
    V_block = tl.make_block_ptr(base=v_base, shape=(T, head_dim), strides=(stride_qkv_t, 1),
                                offsets=(0, 0), block_shape=(BLOCK_N, BLOCK_D), order=(1, 0))

    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)

    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_D], dtype=tl.float32)

    # Out-of-range rows/cols of head_dim are zero-padded, so they do not change the dot products.
    q = tl.load(Q_block, boundary_check=(0, 1), padding_option="zero")

    # Causal: this query block only needs keys [0, (start_m + 1) * BLOCK_M).
    hi = tl.minimum((start_m + 1) * BLOCK_M, T)
    for start_n in range(0, hi, BLOCK_N):
        k = tl.load(K_block, boundary_check=(0, 1), padding_option="zero")
        v = tl.load(V_block, boundary_check=(0, 1), padding_option="zero")
        qk = tl.dot(q, k, input_precision="ieee") * qk_scale
        cols = start_n + offs_n
        causal = (offs_m[:, None] >= cols[None, :]) & (cols[None, :] < T)
        qk = tl.where(causal, qk, float("-inf"))

        # Online softmax (base 2).
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        alpha = tl.math.exp2(m_i - m_new)
        p = tl.math.exp2(qk - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        acc = tl.dot(p.to(v.dtype), v, acc, input_precision="ieee")
        m_i = m_new

        K_block = tl.advance(K_block, (0, BLOCK_N))
        V_block = tl.advance(V_block, (BLOCK_N, 0))

    acc = acc / l_i[:, None]
    O_block = tl.make_block_ptr(base=out_ptr + b * stride_o_b + h * head_dim, shape=(T, head_dim),
                                strides=(stride_o_t, 1), offsets=(start_m * BLOCK_M, 0),
                                block_shape=(BLOCK_M, BLOCK_D), order=(1, 0))
    tl.store(O_block, acc.to(out_ptr.dtype.element_ty), boundary_check=(0, 1))


def causal_attention(qkv: torch.Tensor, n_head: int) -> torch.Tensor:
    """qkv: (B, T, 3C) output of c_attn. Returns y: (B, T, C) with heads already re-interleaved."""
    B, T, C3 = qkv.shape
    C = C3 // 3
    head_dim = C // n_head
    qkv = qkv.contiguous()
    out = torch.empty((B, T, C), device=qkv.device, dtype=qkv.dtype)
    BLOCK_D = max(16, triton.next_power_of_2(head_dim))
    BLOCK_M = 64
    BLOCK_N = 64 if BLOCK_D <= 64 else 32
    qk_scale = (1.0 / math.sqrt(head_dim)) * 1.4426950408889634
    grid = (triton.cdiv(T, BLOCK_M), B * n_head)
    causal_flash_attn_fwd[grid](
        qkv, out,
        T, n_head, C, head_dim,
        qkv.stride(0), qkv.stride(1),
        out.stride(0), out.stride(1),
        qk_scale,
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_D=BLOCK_D,
        num_warps=4 if BLOCK_D <= 64 else 8, num_stages=2,
    )
    return out


class ModelNew(nn.Module):
    """Causal self-attention; the QKV / output projections stay as nn.Linear (cuBLAS GEMMs),
    the attention core (QK^T, causal mask, softmax, PV) runs in one fused Triton kernel."""

    def __init__(self, n_embd: int, n_head: int, attn_pdrop: float, resid_pdrop: float, max_seqlen: int):
        super().__init__()
        assert n_embd % n_head == 0
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.attn_dropout = nn.Dropout(attn_pdrop)
        self.resid_dropout = nn.Dropout(resid_pdrop)
        self.register_buffer("bias", torch.tril(torch.ones(max_seqlen, max_seqlen)).view(1, 1, max_seqlen, max_seqlen))
        self.n_head = n_head
        self.n_embd = n_embd
        # The fused kernel has no dropout on the attention probabilities.
        assert attn_pdrop == 0.0, "fused attention kernel assumes attn_pdrop == 0"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.size()
        qkv = self.c_attn(x)
        y = causal_attention(qkv, self.n_head)
        return self.resid_dropout(self.c_proj(y))
