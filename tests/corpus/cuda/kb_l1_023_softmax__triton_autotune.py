# corpus: problem=kb_l1_023_softmax device=cuda expect=accepted policy=both
# style: Triton with @triton.autotune over num_warps, one program per row
# class: 6
import torch
import torch.nn as nn
import triton
import triton.language as tl

@triton.autotune(
    configs=[triton.Config({}, num_warps=4), triton.Config({}, num_warps=8), triton.Config({}, num_warps=16)],
    key=["n_cols"],
)
@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    den = tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_stride + cols, num / den, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, cols = x.shape
        y = torch.empty_like(x)
        softmax_kernel[(rows,)](y, x, x.stride(0), y.stride(0), cols, BLOCK_SIZE=triton.next_power_of_2(cols))
        return y
