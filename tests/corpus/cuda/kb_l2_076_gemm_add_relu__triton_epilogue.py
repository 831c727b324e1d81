# corpus: problem=kb_l2_076_gemm_add_relu device=cuda expect=accepted policy=kernelbench
# style: cuBLAS GEMM + Triton in-place epilogue
# class: 6
import torch
import torch.nn as nn
import triton
import triton.language as tl

@triton.jit
def bias_relu_kernel(y_ptr, b_ptr, n_elements, n_cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    y = tl.load(y_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs % n_cols, mask=mask)
    tl.store(y_ptr + offs, tl.maximum(y + b, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        y = self.gemm(x)
        n = y.numel()
        bias_relu_kernel[(triton.cdiv(n, 2048),)](y, self.bias, n, y.shape[1], BLOCK=2048)
        return y
