# corpus: problem=kb_l1_005_matrix_scalar_mult device=cuda expect=accepted policy=both
# style: Triton elementwise with @triton.autotune over block size, int64 program offsets, 4 GiB tensor
# class: 4
import torch
import torch.nn as nn
import triton
import triton.language as tl

@triton.autotune(
    configs=[triton.Config({"BLOCK": 1024}, num_warps=4), triton.Config({"BLOCK": 4096}, num_warps=8)],
    key=["n"],
)
@triton.jit
def scale_kernel(a_ptr, out_ptr, s, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(a_ptr + offs, mask=mask) * s, mask=mask)


class ModelNew(nn.Module):
    def forward(self, A: torch.Tensor, s: float) -> torch.Tensor:
        A = A.contiguous()
        out = torch.empty_like(A)
        n = A.numel()
        scale_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](A, out, s, n)
        return out
