# corpus: problem=kb_l1_047_sum_reduction device=cuda expect=accepted policy=both
# style: a dict of two Triton kernels chosen by the reduced dim, tl.reduce with a jitted combine
# class: 2
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _add_combine(a, b):
    return a + b


@triton.jit
def _sum_lastdim_kernel(x_ptr, out_ptr, R, BLOCK_R: tl.constexpr):
    # x viewed as (outer, R) with R contiguous: one program per output element
    row = tl.program_id(0).to(tl.int64)
    base = x_ptr + row * R
    acc = tl.zeros([BLOCK_R], dtype=tl.float32)
    for start in range(0, R, BLOCK_R):
        offs = start + tl.arange(0, BLOCK_R)
        acc += tl.load(base + offs, mask=offs < R, other=0.0).to(tl.float32)
    total = tl.reduce(acc, 0, _add_combine)
    tl.store(out_ptr + row, total.to(out_ptr.dtype.element_ty))


@triton.jit
def _sum_middim_kernel(x_ptr, out_ptr, R, INNER, BLOCK_I: tl.constexpr):
    # x viewed as (outer, R, INNER): each program sums R rows of a BLOCK_I-wide strip
    pid_o = tl.program_id(0).to(tl.int64)
    pid_i = tl.program_id(1)
    offs = pid_i * BLOCK_I + tl.arange(0, BLOCK_I)
    mask = offs < INNER
    base = x_ptr + pid_o * R * INNER
    acc = tl.zeros([BLOCK_I], dtype=tl.float32)
    for r in range(0, R):
        acc += tl.load(base + r * INNER + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + pid_o * INNER + offs, acc.to(out_ptr.dtype.element_ty), mask=mask)


# layout -> kernel; picked per call from where the reduced dim sits
_SUM_KERNELS = {
    "lastdim": _sum_lastdim_kernel,
    "middim": _sum_middim_kernel,
}


def triton_sum_keepdim(x: torch.Tensor, dim: int) -> torch.Tensor:
    assert x.is_cuda and x.is_floating_point()
    dim = dim % x.dim()
    x = x.contiguous()
    shape = list(x.shape)
    outer = 1
    for s in shape[:dim]:
        outer *= s
    R = shape[dim]
    inner = 1
    for s in shape[dim + 1:]:
        inner *= s
    out_shape = shape[:dim] + [1] + shape[dim + 1:]
    if R == 0:
        return torch.zeros(out_shape, device=x.device, dtype=x.dtype)
    out = torch.empty(out_shape, device=x.device, dtype=x.dtype)
    if out.numel() == 0:
        return out

    if inner == 1:
        kernel = _SUM_KERNELS["lastdim"]
        BLOCK_R = min(triton.next_power_of_2(R), 2048)
        kernel[(outer,)](x, out, R, BLOCK_R=BLOCK_R, num_warps=4 if BLOCK_R <= 1024 else 8)
    else:
        kernel = _SUM_KERNELS["middim"]
        BLOCK_I = min(triton.next_power_of_2(inner), 1024)
        kernel[(outer, triton.cdiv(inner, BLOCK_I))](x, out, R, inner, BLOCK_I=BLOCK_I, num_warps=4)
    return out


class ModelNew(nn.Module):
    """torch.sum(x, dim, keepdim=True) with Triton kernels chosen by layout."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return triton_sum_keepdim(x, self.dim)
