# corpus: problem=kb_l1_014_upper_triangular_matmul device=cuda expect=accepted policy=both
# style: Triton autotune with num_stages, 2-D grid via tl.program_id(1), K range cut to the triangle, tl.where zeroing below the diagonal, tl.dot input_precision tf32x3
# class: 5
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32}, num_warps=8, num_stages=3),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32}, num_warps=4, num_stages=4),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32}, num_warps=4, num_stages=4),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}, num_warps=4, num_stages=5),
    ],
    key=["N"],
)
@triton.jit
def triu_matmul_kernel(
    a_ptr, b_ptr, c_ptr, N,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    # 2-D launch grid: axis 0 walks row tiles, axis 1 walks column tiles.
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    c_mask = (offs_m[:, None] < N) & (offs_n[None, :] < N)

    row_lo = pid_m * BLOCK_M
    col_hi = pid_n * BLOCK_N + BLOCK_N  # exclusive
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    if row_lo < col_hi:
        # For upper-triangular A and B:  C[i, j] = sum_{k=i}^{j} A[i, k] B[k, j].
        # Over this tile only k in [row_lo, col_hi) can contribute.
        k_start = (row_lo // BLOCK_K) * BLOCK_K
        k_stop = tl.minimum(col_hi, N)
        for k0 in range(k_start, k_stop, BLOCK_K):
            offs_k = k0 + tl.arange(0, BLOCK_K)
            a = tl.load(a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak,
                        mask=(offs_m[:, None] < N) & (offs_k[None, :] < N), other=0.0)
            b = tl.load(b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn,
                        mask=(offs_k[:, None] < N) & (offs_n[None, :] < N), other=0.0)
            # tf32x3 keeps ~fp32 accuracy while still running on the tensor cores.
            acc = tl.dot(a, b, acc, input_precision="tf32x3")
        # Zero everything strictly below the diagonal (only matters on diagonal tiles).
        acc = tl.where(offs_m[:, None] <= offs_n[None, :], acc, 0.0)
    # Tiles entirely below the diagonal just store zeros.
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=c_mask)


def triu_matmul(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    assert A.dim() == 2 and A.shape == B.shape and A.shape[0] == A.shape[1]
    n = A.shape[0]
    C = torch.empty((n, n), device=A.device, dtype=A.dtype)
    grid = lambda META: (triton.cdiv(n, META["BLOCK_M"]), triton.cdiv(n, META["BLOCK_N"]))
    triu_matmul_kernel[grid](
        A, B, C, n,
        A.stride(0), A.stride(1), B.stride(0), B.stride(1), C.stride(0), C.stride(1),
    )
    return C


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return triu_matmul(A, B)
