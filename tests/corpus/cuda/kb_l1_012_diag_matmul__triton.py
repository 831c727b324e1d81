# corpus: problem=kb_l1_012_diag_matmul device=cuda expect=accepted policy=both
# style: plain @triton.jit with a BLOCK meta-parameter
# class: 2
import torch
import torch.nn as nn
import triton
import triton.language as tl


# diag(A) @ B == B with row i scaled by A[i]; never materialise the N x N diagonal matrix.
@triton.jit
def diag_scale_rows_kernel(
    a_ptr, b_ptr, out_ptr,
    M,
    stride_bn, stride_bm,
    stride_on, stride_om,
    BLOCK: tl.constexpr,
):
    row = tl.program_id(0)
    pid_col = tl.program_id(1)
    cols = pid_col * BLOCK + tl.arange(0, BLOCK)
    mask = cols < M
    scale = tl.load(a_ptr + row)
    b = tl.load(b_ptr + row * stride_bn + cols * stride_bm, mask=mask, other=0.0)
    tl.store(out_ptr + row * stride_on + cols * stride_om, b * scale, mask=mask)


def diag_matmul(A: torch.Tensor, B: torch.Tensor, BLOCK: int = 256) -> torch.Tensor:
    assert A.dim() == 1 and B.dim() == 2, "expected A (N,) and B (N, M)"
    assert A.shape[0] == B.shape[0], "A and B disagree on N"
    assert A.is_cuda and B.is_cuda
    A = A.contiguous()
    N, M = B.shape
    out = torch.empty((N, M), device=B.device, dtype=torch.result_type(A, B))
    if N == 0 or M == 0:
        return out
    grid = lambda meta: (N, triton.cdiv(M, meta["BLOCK"]))
    diag_scale_rows_kernel[grid](
        A, B, out,
        M,
        B.stride(0), B.stride(1),
        out.stride(0), out.stride(1),
        BLOCK=BLOCK,
    )
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return diag_matmul(A, B)
