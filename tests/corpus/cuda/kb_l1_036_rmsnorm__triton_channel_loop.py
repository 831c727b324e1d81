# corpus: problem=kb_l1_036_rmsnorm device=cuda expect=accepted policy=both
# style: Triton, 2D launch grid, loop over channels
# class: 6
import torch
import torch.nn as nn
import triton
import triton.language as tl

@triton.jit
def rms_norm_kernel(x_ptr, y_ptr, C, S, eps, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    b = tl.program_id(1)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < S
    base = b * C * S
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for c in range(0, C):
        v = tl.load(x_ptr + base + c * S + offs, mask=mask, other=0.0)
        acc += v * v
    inv = 1.0 / tl.sqrt(acc / C + eps)
    for c in range(0, C):
        v = tl.load(x_ptr + base + c * S + offs, mask=mask, other=0.0)
        tl.store(y_ptr + base + c * S + offs, v * inv, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        B, C = x.shape[0], x.shape[1]
        S = x.numel() // (B * C)
        BLOCK = 1024
        rms_norm_kernel[(triton.cdiv(S, BLOCK), B)](x, y, C, S, self.eps, BLOCK=BLOCK)
        return y
