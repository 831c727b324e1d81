# corpus: problem=kb_l1_020_leaky_relu device=cuda expect=accepted policy=both
# style: torch.library.triton_op with wrap_triton, called through torch.ops
# class: 1,2
import torch
import torch.nn as nn
import triton
import triton.language as tl
from torch.library import triton_op, wrap_triton


@triton.jit
def _leaky_relu_kernel(x_ptr, out_ptr, n_elements, negative_slope, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid.to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    y = tl.where(x > 0, x, x * negative_slope)
    tl.store(out_ptr + offsets, y, mask=mask)


# Registered as a real torch op so it composes with torch.compile / dispatch.
@triton_op("kb_triton_i::leaky_relu", mutates_args={})
def leaky_relu(x: torch.Tensor, negative_slope: float) -> torch.Tensor:
    x = x.contiguous()
    out = torch.empty_like(x)
    n_elements = x.numel()
    if n_elements == 0:
        return out
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)
    wrap_triton(_leaky_relu_kernel)[grid](x, out, n_elements, negative_slope, BLOCK_SIZE=1024)
    return out


class ModelNew(nn.Module):
    """LeakyReLU computed by a Triton kernel exposed through torch.library.triton_op."""

    def __init__(self, negative_slope: float = 0.01):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.ops.kb_triton_i.leaky_relu(x, float(self.negative_slope))
