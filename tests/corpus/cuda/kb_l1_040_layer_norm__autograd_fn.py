# corpus: problem=kb_l1_040_layer_norm device=cuda expect=accepted policy=both
# style: torch.autograd.Function around a Triton forward, nn.LayerNorm kept for its parameters
# class: 2
import math

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _layer_norm_fwd_kernel(
    X, Y, W, B, Mean, Rstd,
    stride, N, eps,
    BLOCK_SIZE: tl.constexpr,
):
    # one program normalizes one row of length N (= prod(normalized_shape))
    row = tl.program_id(0).to(tl.int64)
    X += row * stride
    Y += row * stride

    # mean
    _sum = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        _sum += tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
    mean = tl.sum(_sum, axis=0) / N

    # biased variance, two-pass for accuracy
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.0)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1.0 / tl.sqrt(var + eps)

    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)

    # normalize + affine
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(B + cols, mask=mask, other=0.0).to(tl.float32)
        x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
        y = (x - mean) * rstd * w + b
        tl.store(Y + cols, y.to(Y.dtype.element_ty), mask=mask)


class TritonLayerNormFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, normalized_shape, weight, bias, eps):
        N = math.prod(normalized_shape)
        x_c = x.contiguous()
        x2d = x_c.view(-1, N)
        M = x2d.shape[0]
        y = torch.empty_like(x2d)
        mean = torch.empty((M,), dtype=torch.float32, device=x.device)
        rstd = torch.empty((M,), dtype=torch.float32, device=x.device)
        BLOCK_SIZE = min(4096, triton.next_power_of_2(N))
        num_warps = min(max(BLOCK_SIZE // 256, 1), 16)
        if M > 0:
            _layer_norm_fwd_kernel[(M,)](
                x2d, y, weight.contiguous(), bias.contiguous(), mean, rstd,
                x2d.stride(0), N, eps,
                BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps,
            )
        ctx.save_for_backward(x2d, weight, mean, rstd)
        ctx.N = N
        return y.view_as(x)

    @staticmethod
    def backward(ctx, grad_out):
        x2d, weight, mean, rstd = ctx.saved_tensors
        N = ctx.N
        g2d = grad_out.contiguous().view(-1, N).float()
        x_hat = (x2d.float() - mean[:, None]) * rstd[:, None]
        w = weight.reshape(-1).float()
        grad_w = (g2d * x_hat).sum(0).view_as(weight).to(weight.dtype)
        grad_b = g2d.sum(0).view_as(weight).to(weight.dtype)
        gw = g2d * w[None, :]
        grad_x = rstd[:, None] * (
            gw - gw.mean(1, keepdim=True) - x_hat * (gw * x_hat).mean(1, keepdim=True)
        )
        return grad_x.view_as(grad_out).to(x2d.dtype), None, grad_w, grad_b, None


class ModelNew(nn.Module):
    """LayerNorm whose forward is a Triton kernel; the nn.LayerNorm keeps the affine parameters."""

    def __init__(self, normalized_shape: tuple):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return TritonLayerNormFn.apply(x, tuple(self.ln.normalized_shape), self.ln.weight, self.ln.bias, self.ln.eps)
