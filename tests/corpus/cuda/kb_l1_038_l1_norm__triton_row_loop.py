# corpus: problem=kb_l1_038_l1_norm device=cuda expect=accepted policy=both
# style: Triton, looped row reduction with int64 row offsets
# class: 4
import torch
import torch.nn as nn
import triton
import triton.language as tl

@triton.jit
def l1_norm_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * n_cols
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.abs(tl.load(x_ptr + base + cols, mask=cols < n_cols, other=0.0))
    inv = 1.0 / tl.sum(acc, axis=0)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        m = cols < n_cols
        tl.store(y_ptr + base + cols, tl.load(x_ptr + base + cols, mask=m, other=0.0) * inv, mask=m)


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        l1_norm_kernel[(x.shape[0],)](x, y, x.shape[1], BLOCK=4096)
        return y
