# corpus: problem=kb_l1_036_rmsnorm device=cuda expect=accepted policy=both
# style: Triton autotune, libdevice sqrt, 2-D lambda-meta grid
# class: 2
import torch
import torch.nn as nn
import triton
import triton.language as tl

try:  # Triton >= 3.0
    from triton.language.extra import libdevice
except ImportError:  # older layouts
    from triton.language.extra.cuda import libdevice


# x is (B, C, *spatial), contiguous. RMS is taken over C for every (b, spatial) position.
# Each program owns BLOCK_S consecutive spatial positions of one batch item, so every
# load over the channel loop is a coalesced run of BLOCK_S floats.
@triton.autotune(
    configs=[
        triton.Config({"BLOCK_S": 128}, num_warps=4),
        triton.Config({"BLOCK_S": 256}, num_warps=4),
        triton.Config({"BLOCK_S": 512}, num_warps=8),
        triton.Config({"BLOCK_S": 1024}, num_warps=8),
    ],
    key=["C", "S"],
)
@triton.jit
def rmsnorm_channel_kernel(x_ptr, y_ptr, C, S, eps, BLOCK_S: tl.constexpr):
    pid_s = tl.program_id(0)
    b = tl.program_id(1)
    offs = pid_s * BLOCK_S + tl.arange(0, BLOCK_S)
    mask = offs < S
    base = b.to(tl.int64) * C * S

    sq = tl.zeros([BLOCK_S], dtype=tl.float32)
    for c in range(0, C):
        x = tl.load(x_ptr + base + c * S + offs, mask=mask, other=0.0).to(tl.float32)
        sq += x * x
    rms = libdevice.sqrt(sq / C + eps)

    for c in range(0, C):
        x = tl.load(x_ptr + base + c * S + offs, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_ptr + base + c * S + offs, (x / rms).to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    """RMSNorm over dim 1, one Triton kernel (sum of squares + normalize)."""

    def __init__(self, num_features: int, eps: float = 1e-5):
        super().__init__()
        self.num_features = num_features
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        assert x.is_cuda and x.dim() >= 2
        x = x.contiguous()
        B, C = x.shape[0], x.shape[1]
        S = x.numel() // max(B * C, 1)
        y = torch.empty_like(x)
        if x.numel() == 0:
            return y
        grid = lambda meta: (triton.cdiv(S, meta["BLOCK_S"]), B)
        rmsnorm_channel_kernel[grid](x, y, C, S, self.eps)
        return y
