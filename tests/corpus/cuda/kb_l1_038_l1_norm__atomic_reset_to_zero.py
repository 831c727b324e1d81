# corpus: problem=kb_l1_038_l1_norm device=cuda expect=accepted policy=both
# style: docstring; 2-D grid (row, chunk); tl.atomic_add; autotune with reset_to_zero and num_stages; module constants repeated
# class: 2
"""L1 row normalisation  y = x / sum(|x|, dim=1)  with two Triton kernels.

Rows are long (65535), so each row is split across several programs on a 2-D grid
(axis 0 = row, axis 1 = chunk of the row):
  1. `row_abs_sum_kernel`  - every program reduces its chunk and atomically adds it to sums[row].
                             It is autotuned, and because it accumulates into `sums`, the autotuner
                             must zero that buffer before each benchmarking run (reset_to_zero).
  2. `row_scale_kernel`    - y = x / sums[row].
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

batch_size = 32768
dim = 65535


@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 4096, "CHUNKS_PER_PROG": 4}, num_warps=8, num_stages=2),
        triton.Config({"BLOCK": 2048, "CHUNKS_PER_PROG": 8}, num_warps=4, num_stages=3),
        triton.Config({"BLOCK": 8192, "CHUNKS_PER_PROG": 2}, num_warps=16, num_stages=2),
    ],
    key=["n_cols"],
    reset_to_zero=["sums_ptr"],
)
@triton.jit
def row_abs_sum_kernel(x_ptr, sums_ptr, n_cols, stride_row,
                       BLOCK: tl.constexpr, CHUNKS_PER_PROG: tl.constexpr):
    row = tl.program_id(0)
    chunk = tl.program_id(1)
    row_ptr = x_ptr + row.to(tl.int64) * stride_row
    base = chunk * (BLOCK * CHUNKS_PER_PROG)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for i in range(CHUNKS_PER_PROG):
        cols = base + i * BLOCK + tl.arange(0, BLOCK)
        v = tl.load(row_ptr + cols, mask=cols < n_cols, other=0.0)
        acc += tl.abs(v.to(tl.float32))
    tl.atomic_add(sums_ptr + row, tl.sum(acc, axis=0))


@triton.jit
def row_scale_kernel(x_ptr, sums_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    s = tl.load(sums_ptr + row)
    x = tl.load(x_ptr + row.to(tl.int64) * stride_x + cols, mask=mask, other=0.0)
    y = x.to(tl.float32) / s
    tl.store(y_ptr + row.to(tl.int64) * stride_y + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def l1_normalize(x: torch.Tensor) -> torch.Tensor:
    assert x.dim() == 2
    x = x.contiguous()
    n_rows, n_cols = x.shape
    sums = torch.zeros(n_rows, device=x.device, dtype=torch.float32)
    y = torch.empty_like(x)

    grid_sum = lambda meta: (n_rows, triton.cdiv(n_cols, meta["BLOCK"] * meta["CHUNKS_PER_PROG"]))
    row_abs_sum_kernel[grid_sum](x, sums, n_cols, x.stride(0))

    BLOCK = 4096
    row_scale_kernel[(n_rows, triton.cdiv(n_cols, BLOCK))](
        x, sums, y, n_cols, x.stride(0), y.stride(0), BLOCK=BLOCK, num_warps=8)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return l1_normalize(x)
