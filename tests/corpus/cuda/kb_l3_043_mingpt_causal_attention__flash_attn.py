# corpus: problem=kb_l3_043_mingpt_causal_attention device=cuda expect=accepted policy=kernelbench
# style: nn.Linear projections, Triton causal flash attention with online softmax, head dim padded
# class: 2,3
import math

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def causal_flash_attn_fwd(
    q_ptr, k_ptr, v_ptr, o_ptr,
    stride_qb, stride_qt, stride_qh, stride_qd,
    stride_kb, stride_kt, stride_kh, stride_kd,
    stride_vb, stride_vt, stride_vh, stride_vd,
    stride_ob, stride_ot, stride_oh, stride_od,
    H, T, D, sm_scale,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
):
    # One program = BLOCK_M query rows of one (batch, head). Online softmax over key blocks;
    # BLOCK_M == BLOCK_N, so every row sees at least one unmasked key in the first block.
    start_m = tl.program_id(0)
    pid_bh = tl.program_id(1)
    b = pid_bh // H
    h = pid_bh % H

    q_base = q_ptr + b.to(tl.int64) * stride_qb + h * stride_qh
    k_base = k_ptr + b.to(tl.int64) * stride_kb + h * stride_kh
    v_base = v_ptr + b.to(tl.int64) * stride_vb + h * stride_vh
    o_base = o_ptr + b.to(tl.int64) * stride_ob + h * stride_oh

    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    d_mask = offs_d < D

    q = tl.load(
        q_base + offs_m[:, None] * stride_qt + offs_d[None, :] * stride_qd,
        mask=(offs_m[:, None] < T) & d_mask[None, :], other=0.0,
    )

    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_D], dtype=tl.float32)

    # causal: keys beyond the last query row of this block are never needed
    hi = tl.minimum((start_m + 1) * BLOCK_M, T)
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + offs_n
        kv_mask = (cols[:, None] < T) & d_mask[None, :]
        k = tl.load(k_base + cols[:, None] * stride_kt + offs_d[None, :] * stride_kd, mask=kv_mask, other=0.0)
        v = tl.load(v_base + cols[:, None] * stride_vt + offs_d[None, :] * stride_vd, mask=kv_mask, other=0.0)

        s = tl.dot(q, tl.trans(k), input_precision="ieee") * sm_scale
        causal = (offs_m[:, None] >= cols[None, :]) & (cols[None, :] < T)
        s = tl.where(causal, s, float("-inf"))

        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision="ieee")
        m_i = m_new

    acc = acc / l_i[:, None]
    tl.store(
        o_base + offs_m[:, None] * stride_ot + offs_d[None, :] * stride_od,
        acc.to(o_ptr.dtype.element_ty),
        mask=(offs_m[:, None] < T) & d_mask[None, :],
    )


def causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """q, k, v: (B, T, H, D) views (any strides). Returns (B, T, H, D) contiguous."""
    B, T, H, D = q.shape
    o = torch.empty((B, T, H, D), device=q.device, dtype=q.dtype)
    if B * T * H == 0:
        return o
    BLOCK = 32
    BLOCK_D = max(16, triton.next_power_of_2(D))
    grid = (triton.cdiv(T, BLOCK), B * H)
    causal_flash_attn_fwd[grid](
        q, k, v, o,
        q.stride(0), q.stride(1), q.stride(2), q.stride(3),
        k.stride(0), k.stride(1), k.stride(2), k.stride(3),
        v.stride(0), v.stride(1), v.stride(2), v.stride(3),
        o.stride(0), o.stride(1), o.stride(2), o.stride(3),
        H, T, D, 1.0 / math.sqrt(D),
        BLOCK_M=BLOCK, BLOCK_N=BLOCK, BLOCK_D=BLOCK_D,
        num_warps=4, num_stages=2,
    )
    return o


class ModelNew(nn.Module):
    """minGPT causal self-attention: QKV / output projections on cuBLAS (nn.Linear),
    the masked softmax attention in one fused Triton flash-attention kernel."""

    def __init__(self, n_embd: int, n_head: int, attn_pdrop: float, resid_pdrop: float, max_seqlen: int):
        super().__init__()
        assert n_embd % n_head == 0
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        # attention dropout is not fused into the kernel; this problem uses p = 0
        self.attn_dropout = nn.Dropout(attn_pdrop)
        self.resid_dropout = nn.Dropout(resid_pdrop)
        self.register_buffer("bias", torch.tril(torch.ones(max_seqlen, max_seqlen)).view(1, 1, max_seqlen, max_seqlen))
        self.n_head = n_head
        self.n_embd = n_embd

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.size()
        qkv = self.c_attn(x)
        q, k, v = qkv.split(self.n_embd, dim=2)
        hd = C // self.n_head
        # no transposes/copies: the kernel reads the (B, T, H, D) views through their strides
        q = q.view(B, T, self.n_head, hd)
        k = k.view(B, T, self.n_head, hd)
        v = v.view(B, T, self.n_head, hd)
        y = causal_attention(q, k, v).view(B, T, C)
        return self.resid_dropout(self.c_proj(y))
