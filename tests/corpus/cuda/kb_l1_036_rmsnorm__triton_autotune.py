# corpus: problem=kb_l1_036_rmsnorm device=cuda expect=accepted policy=both
# style: Triton with @triton.autotune over block sizes and warps
# class: 2
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_C": 8, "BLOCK_S": 64}, num_warps=2),
        triton.Config({"BLOCK_C": 16, "BLOCK_S": 64}, num_warps=4),
        triton.Config({"BLOCK_C": 16, "BLOCK_S": 128}, num_warps=4),
        triton.Config({"BLOCK_C": 32, "BLOCK_S": 128}, num_warps=8),
        triton.Config({"BLOCK_C": 8, "BLOCK_S": 256}, num_warps=4),
        triton.Config({"BLOCK_C": 32, "BLOCK_S": 32}, num_warps=4),
    ],
    key=["C", "S"],
)
@triton.jit
def rmsnorm_channel_kernel(
    x_ptr,
    y_ptr,
    C,
    S,
    eps,
    BLOCK_C: tl.constexpr,
    BLOCK_S: tl.constexpr,
):
    # x viewed as (B, C, S); normalise over C for every (b, s)
    pid_b = tl.program_id(0)
    pid_s = tl.program_id(1)

    offs_s = pid_s * BLOCK_S + tl.arange(0, BLOCK_S)
    mask_s = offs_s < S
    base = pid_b.to(tl.int64) * C * S

    acc = tl.zeros([BLOCK_S], dtype=tl.float32)
    for c0 in range(0, C, BLOCK_C):
        offs_c = c0 + tl.arange(0, BLOCK_C)
        mask = (offs_c[:, None] < C) & mask_s[None, :]
        ptrs = x_ptr + base + offs_c[:, None] * S + offs_s[None, :]
        x = tl.load(ptrs, mask=mask, other=0.0).to(tl.float32)
        acc += tl.sum(x * x, axis=0)

    rms = tl.sqrt(acc / C + eps)

    for c0 in range(0, C, BLOCK_C):
        offs_c = c0 + tl.arange(0, BLOCK_C)
        mask = (offs_c[:, None] < C) & mask_s[None, :]
        offs = base + offs_c[:, None] * S + offs_s[None, :]
        x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        y = x / rms[None, :]
        tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def triton_rmsnorm(x: torch.Tensor, eps: float) -> torch.Tensor:
    assert x.is_cuda and x.dim() >= 2
    x = x.contiguous()
    y = torch.empty_like(x)
    B, C = x.shape[0], x.shape[1]
    if x.numel() == 0:
        return y
    S = x.numel() // (B * C)
    grid = lambda meta: (B, triton.cdiv(S, meta["BLOCK_S"]))
    rmsnorm_channel_kernel[grid](x, y, C, S, eps)
    return y


class ModelNew(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-5):
        super().__init__()
        self.num_features = num_features
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return triton_rmsnorm(x, self.eps)
