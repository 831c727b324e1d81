# corpus: problem=kb_l1_023_softmax device=cuda expect=accepted policy=both
# style: @triton.heuristics choosing one-tile or online two-pass softmax
# class: 2
import torch
import torch.nn as nn
import triton
import triton.language as tl

_MAX_TILE = 8192


@triton.heuristics(
    {
        "BLOCK_SIZE": lambda args: min(triton.next_power_of_2(args["n_cols"]), _MAX_TILE),
        "ONE_TILE": lambda args: args["n_cols"] <= _MAX_TILE,
    }
)
@triton.jit
def softmax_kernel(
    out_ptr, in_ptr,
    in_row_stride, out_row_stride,
    n_cols,
    BLOCK_SIZE: tl.constexpr, ONE_TILE: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    in_row = in_ptr + row * in_row_stride
    out_row = out_ptr + row * out_row_stride
    cols = tl.arange(0, BLOCK_SIZE)

    if ONE_TILE:
        # the whole row lives in registers
        mask = cols < n_cols
        x = tl.load(in_row + cols, mask=mask, other=-float("inf")).to(tl.float32)
        x_max = tl.max(x, axis=0)
        num = tl.exp(x - x_max)
        den = tl.sum(num, axis=0)
        tl.store(out_row + cols, (num / den).to(out_ptr.dtype.element_ty), mask=mask)
    else:
        # long rows: online max / sum pass, then a normalizing pass
        m_i = tl.full([], float("-inf"), dtype=tl.float32)
        l_i = tl.full([], 0.0, dtype=tl.float32)
        for start in range(0, n_cols, BLOCK_SIZE):
            offs = start + cols
            x = tl.load(in_row + offs, mask=offs < n_cols, other=-float("inf")).to(tl.float32)
            m_new = tl.maximum(m_i, tl.max(x, axis=0))
            l_i = l_i * tl.exp(m_i - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
            m_i = m_new
        for start in range(0, n_cols, BLOCK_SIZE):
            offs = start + cols
            mask = offs < n_cols
            x = tl.load(in_row + offs, mask=mask, other=-float("inf")).to(tl.float32)
            y = tl.exp(x - m_i) / l_i
            tl.store(out_row + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


def triton_softmax(x: torch.Tensor) -> torch.Tensor:
    """Row-wise softmax over the last dim of a 2D CUDA tensor."""
    assert x.is_cuda and x.dim() == 2
    if x.stride(1) != 1:
        x = x.contiguous()
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, n_cols), device=x.device, dtype=x.dtype)
    if n_rows == 0 or n_cols == 0:
        return y
    num_warps = 4
    if n_cols >= 2048:
        num_warps = 8
    if n_cols >= 4096:
        num_warps = 16
    softmax_kernel[(n_rows,)](
        y, x,
        x.stride(0), y.stride(0),
        n_cols,
        num_warps=num_warps,
    )
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return triton_softmax(x)
