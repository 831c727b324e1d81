# corpus: problem=kb_l1_047_sum_reduction device=cuda expect=accepted policy=kernelbench
# style: Triton kernels held in a types.SimpleNamespace and launched as kernels.last[grid](...), autotune, @dataclass config, chunks in a generator expression then torch.cat (blind round 12; dynamic-code static reject for importing types before)
# class: 2
import math
import types
from dataclasses import dataclass

import torch
import torch.nn as nn
import triton
import triton.language as tl

# torch.sum(x, dim, keepdim=True) in Triton. x is viewed as (outer, reduce, inner);
# each program sums a [reduce, BLOCK_I] column strip with fp32 accumulation.
# The outer extent is processed in chunks (one launch per chunk) and the chunk
# results are concatenated.


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_R": 32, "BLOCK_I": 128}, num_warps=4),
        triton.Config({"BLOCK_R": 16, "BLOCK_I": 256}, num_warps=4),
        triton.Config({"BLOCK_R": 64, "BLOCK_I": 64}, num_warps=4),
        triton.Config({"BLOCK_R": 8, "BLOCK_I": 512}, num_warps=8),
    ],
    key=["REDUCE", "INNER"],
)
@triton.jit
def _sum_mid_kernel(x_ptr, out_ptr, REDUCE, INNER,
                    BLOCK_R: tl.constexpr, BLOCK_I: tl.constexpr):
    pid_o = tl.program_id(0).to(tl.int64)
    pid_i = tl.program_id(1)
    offs_i = pid_i * BLOCK_I + tl.arange(0, BLOCK_I)
    mask_i = offs_i < INNER
    base = x_ptr + pid_o * REDUCE * INNER
    acc = tl.zeros([BLOCK_R, BLOCK_I], dtype=tl.float32)
    for r0 in range(0, REDUCE, BLOCK_R):
        offs_r = r0 + tl.arange(0, BLOCK_R)
        ptrs = base + offs_r[:, None].to(tl.int64) * INNER + offs_i[None, :]
        m = (offs_r[:, None] < REDUCE) & mask_i[None, :]
        acc += tl.load(ptrs, mask=m, other=0.0).to(tl.float32)
    total = tl.sum(acc, axis=0)
    tl.store(out_ptr + pid_o * INNER + offs_i, total.to(out_ptr.dtype.element_ty), mask=mask_i)


@triton.jit
def _sum_last_kernel(x_ptr, out_ptr, REDUCE, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = x_ptr + row * REDUCE
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for r0 in range(0, REDUCE, BLOCK):
        offs = r0 + tl.arange(0, BLOCK)
        acc += tl.load(base + offs, mask=offs < REDUCE, other=0.0).to(tl.float32)
    tl.store(out_ptr + row, tl.sum(acc, axis=0).to(out_ptr.dtype.element_ty))


kernels = types.SimpleNamespace(mid=_sum_mid_kernel, last=_sum_last_kernel)


@dataclass
class ReduceConfig:
    outer_chunk: int = 8192     # outer rows per launch
    last_block: int = 1024      # BLOCK for the reduce-over-last-dim kernel


def _sum_chunk(x3: torch.Tensor, cfg: ReduceConfig) -> torch.Tensor:
    outer, reduce, inner = x3.shape
    out = torch.empty((outer, inner), device=x3.device, dtype=x3.dtype)
    if inner == 1:
        kernels.last[(outer,)](x3, out, reduce, BLOCK=cfg.last_block)
    else:
        grid = lambda meta: (outer, triton.cdiv(inner, meta["BLOCK_I"]))
        kernels.mid[grid](x3, out, reduce, inner)
    return out


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super(ModelNew, self).__init__()
        self.dim = dim
        self.cfg = ReduceConfig()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            x = x.contiguous()
            d = self.dim % x.dim()
            outer = math.prod(x.shape[:d])
            reduce = x.shape[d]
            inner = math.prod(x.shape[d + 1:])
            out_shape = list(x.shape)
            out_shape[d] = 1
            if outer == 0 or inner == 0:
                return x.new_zeros(out_shape)
            x3 = x.view(outer, reduce, inner)
            out = torch.cat(tuple(_sum_chunk(c, self.cfg) for c in x3.split(self.cfg.outer_chunk, dim=0)), dim=0)
            return out.view(out_shape)


batch_size = 128
dim1 = 4096
dim2 = 4095
reduce_dim = 1


def get_inputs():
    x = torch.rand(batch_size, dim1, dim2)
    return [x]


def get_init_inputs():
    return [reduce_dim]
