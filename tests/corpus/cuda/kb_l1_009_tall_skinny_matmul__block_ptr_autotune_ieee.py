# corpus: problem=kb_l1_009_tall_skinny_matmul device=cuda expect=accepted policy=both
# style: Triton autotune (5 configs), block pointers with tl.advance and boundary_check, tl.dot(input_precision='ieee'), grouped tile ordering
# class: 1
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 16384 * 2
N = 16 * 2


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "GROUP_M": 8}, num_warps=8, num_stages=2),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 256, "GROUP_M": 8}, num_warps=8, num_stages=2),
        triton.Config({"BLOCK_M": 256, "BLOCK_N": 128, "GROUP_M": 8}, num_warps=8, num_stages=2),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 256, "GROUP_M": 8}, num_warps=4, num_stages=2),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 128, "GROUP_M": 8}, num_warps=4, num_stages=3),
    ],
    key=["M", "N", "K"],
)
@triton.jit
def tall_skinny_matmul_kernel(
    a_ptr, b_ptr, c_ptr,
    M, N, K,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    # grouped (L2-friendly) ordering of output tiles
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    a_blk = tl.make_block_ptr(
        base=a_ptr, shape=(M, K), strides=(stride_am, stride_ak),
        offsets=(pid_m * BLOCK_M, 0), block_shape=(BLOCK_M, BLOCK_K), order=(1, 0),
    )
    b_blk = tl.make_block_ptr(
        base=b_ptr, shape=(K, N), strides=(stride_bk, stride_bn),
        offsets=(0, pid_n * BLOCK_N), block_shape=(BLOCK_K, BLOCK_N), order=(1, 0),
    )

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    # the inner dimension is tiny (32): usually a single iteration
    for _ in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_blk, boundary_check=(0, 1), padding_option="zero")
        b = tl.load(b_blk, boundary_check=(0, 1), padding_option="zero")
        acc += tl.dot(a, b, input_precision="ieee")
        a_blk = tl.advance(a_blk, (0, BLOCK_K))
        b_blk = tl.advance(b_blk, (BLOCK_K, 0))

    c_blk = tl.make_block_ptr(
        base=c_ptr, shape=(M, N), strides=(stride_cm, stride_cn),
        offsets=(pid_m * BLOCK_M, pid_n * BLOCK_N), block_shape=(BLOCK_M, BLOCK_N), order=(1, 0),
    )
    tl.store(c_blk, acc.to(c_ptr.dtype.element_ty), boundary_check=(0, 1))


def tall_skinny_matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    assert a.dim() == 2 and b.dim() == 2 and a.shape[1] == b.shape[0]
    assert a.is_cuda and b.is_cuda
    Mdim, Kdim = a.shape
    Ndim = b.shape[1]
    c = torch.empty((Mdim, Ndim), device=a.device, dtype=a.dtype)
    BLOCK_K = max(16, min(64, triton.next_power_of_2(Kdim)))
    grid = lambda META: (triton.cdiv(Mdim, META["BLOCK_M"]) * triton.cdiv(Ndim, META["BLOCK_N"]),)
    tall_skinny_matmul_kernel[grid](
        a, b, c,
        Mdim, Ndim, Kdim,
        a.stride(0), a.stride(1),
        b.stride(0), b.stride(1),
        c.stride(0), c.stride(1),
        BLOCK_K=BLOCK_K,
    )
    return c


class ModelNew(nn.Module):
    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return tall_skinny_matmul(A, B)


def get_inputs():
    return [torch.randn(M, N), torch.randn(N, M)]


def get_init_inputs():
    return []
