# corpus: problem=kb_l3_043_mingpt_causal_attention device=cuda expect=accepted policy=kernelbench
# style: F.linear kept for both projections; Triton flash attention reading q/k/v from the packed projection; online softmax; causal tl.where; 2-D grid; autotune with num_stages; the reference's p=0 dropout module called
# class: 2,3
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 64}, num_warps=4, num_stages=2),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 32}, num_warps=4, num_stages=3),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 64}, num_warps=8, num_stages=2),
    ],
    key=["T", "HEAD_DIM"],
)
@triton.jit
def causal_flash_attn_kernel(
    qkv_ptr, out_ptr,
    stride_qb, stride_qt,          # strides of the packed [B, T, 3C] c_attn output
    stride_ob, stride_ot,          # strides of the [B, T, C] output
    T, C, H, HEAD_DIM, sm_scale,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
):
    pid_m = tl.program_id(0)        # query block
    pid_bh = tl.program_id(1)       # (batch, head)
    b = pid_bh // H
    h = pid_bh % H

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    d_mask = offs_d < HEAD_DIM

    # q, k, v are read straight out of the packed projection: column offsets 0, C, 2C plus h * HEAD_DIM.
    base = qkv_ptr + b.to(tl.int64) * stride_qb + h * HEAD_DIM
    q = tl.load(base + offs_m[:, None] * stride_qt + offs_d[None, :],
                mask=(offs_m[:, None] < T) & d_mask[None, :], other=0.0)

    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, BLOCK_D), dtype=tl.float32)

    # Causal: keys beyond the last query row of this block are never needed.
    hi = tl.minimum((pid_m + 1) * BLOCK_M, T)
    for start_n in range(0, hi, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        kv_mask = (offs_n[:, None] < T) & d_mask[None, :]
        k = tl.load(base + C + offs_n[:, None] * stride_qt + offs_d[None, :], mask=kv_mask, other=0.0)
        v = tl.load(base + 2 * C + offs_n[:, None] * stride_qt + offs_d[None, :], mask=kv_mask, other=0.0)

        s = tl.dot(q, tl.trans(k), input_precision="tf32x3") * sm_scale
        causal = (offs_m[:, None] >= offs_n[None, :]) & (offs_n[None, :] < T)
        s = tl.where(causal, s, float("-inf"))

        # online softmax
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p, v, input_precision="tf32x3")
        m_i = m_new

    acc = acc / l_i[:, None]
    o_ptrs = out_ptr + b.to(tl.int64) * stride_ob + offs_m[:, None] * stride_ot + h * HEAD_DIM + offs_d[None, :]
    tl.store(o_ptrs, acc.to(out_ptr.dtype.element_ty), mask=(offs_m[:, None] < T) & d_mask[None, :])


def causal_attention(qkv: torch.Tensor, n_head: int) -> torch.Tensor:
    """qkv: [B, T, 3C] (output of c_attn). Returns softmax(mask(q k^T / sqrt(d))) v laid out as [B, T, C]."""
    B, T, C3 = qkv.shape
    C = C3 // 3
    hd = C // n_head
    qkv = qkv.contiguous()
    out = torch.empty((B, T, C), device=qkv.device, dtype=qkv.dtype)
    grid = lambda META: (triton.cdiv(T, META["BLOCK_M"]), B * n_head)
    causal_flash_attn_kernel[grid](
        qkv, out,
        qkv.stride(0), qkv.stride(1),
        out.stride(0), out.stride(1),
        T, C, n_head, hd, 1.0 / math.sqrt(hd),
        BLOCK_D=triton.next_power_of_2(hd),
    )
    return out


class ModelNew(nn.Module):
    """minGPT causal self-attention; the attention core is a fused Triton flash-attention kernel,
    the two projections stay as F.linear."""

    def __init__(self, n_embd: int, n_head: int, attn_pdrop: float, resid_pdrop: float, max_seqlen: int):
        super().__init__()
        assert n_embd % n_head == 0
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.attn_dropout = nn.Dropout(attn_pdrop)
        self.resid_dropout = nn.Dropout(resid_pdrop)
        # kept for state_dict compatibility; the kernel applies the causal mask itself
        self.register_buffer("bias", torch.tril(torch.ones(max_seqlen, max_seqlen)).view(1, 1, max_seqlen, max_seqlen))
        self.n_head = n_head
        self.n_embd = n_embd
        self.attn_pdrop = attn_pdrop

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.size()
        if self.training and self.attn_pdrop > 0:
            raise NotImplementedError("attention dropout is not implemented in the fused kernel")
        qkv = F.linear(x, self.c_attn.weight, self.c_attn.bias)
        y = causal_attention(qkv, self.n_head)
        return self.resid_dropout(F.linear(y, self.c_proj.weight, self.c_proj.bias))
