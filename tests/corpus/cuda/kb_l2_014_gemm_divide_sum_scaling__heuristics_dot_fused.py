# corpus: problem=kb_l2_014_gemm_divide_sum_scaling device=cuda expect=accepted policy=both
# style: Triton @triton.heuristics block sizes, tl.dot with masked padding, fused divide, sum and scale, triton.cdiv
# class: 2
import torch
import torch.nn as nn
import triton
import triton.language as tl

batch_size = 128
input_size = 10
hidden_size = 20
scaling_factor = 1.5


@triton.heuristics({
    "BLOCK_K": lambda a: max(16, min(64, triton.next_power_of_2(a["K"]))),
    "BLOCK_H": lambda a: max(16, min(64, triton.next_power_of_2(a["H"]))),
})
@triton.jit
def gemm_div_sum_scale_kernel(
    x_ptr, w_ptr, out_ptr,
    B, K, H,
    stride_xb, stride_xk,
    stride_wh, stride_wk,
    scale,
    BLOCK_B: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_H: tl.constexpr,
):
    """out[b] = scale * sum_h ( (x[b, :] . W[h, :]) / 2 )"""
    pid = tl.program_id(0)
    rows = pid * BLOCK_B + tl.arange(0, BLOCK_B)
    row_mask = rows < B
    row_sum = tl.zeros((BLOCK_B,), dtype=tl.float32)

    for h0 in range(0, H, BLOCK_H):
        hs = h0 + tl.arange(0, BLOCK_H)
        h_mask = hs < H
        acc = tl.zeros((BLOCK_B, BLOCK_H), dtype=tl.float32)
        for k0 in range(0, K, BLOCK_K):
            ks = k0 + tl.arange(0, BLOCK_K)
            k_mask = ks < K
            x = tl.load(x_ptr + rows[:, None] * stride_xb + ks[None, :] * stride_xk,
                        mask=row_mask[:, None] & k_mask[None, :], other=0.0)
            # W^T tile: (BLOCK_K, BLOCK_H)
            wt = tl.load(w_ptr + hs[None, :] * stride_wh + ks[:, None] * stride_wk,
                         mask=h_mask[None, :] & k_mask[:, None], other=0.0)
            acc += tl.dot(x, wt, input_precision="ieee")
        acc = acc / 2.0
        acc = tl.where(h_mask[None, :], acc, 0.0)
        row_sum += tl.sum(acc, axis=1)

    tl.store(out_ptr + rows, row_sum * scale, mask=row_mask)


def gemm_divide_sum_scale(x: torch.Tensor, weight: torch.Tensor, scale: float) -> torch.Tensor:
    assert x.is_cuda and weight.is_cuda
    B, K = x.shape
    H = weight.shape[0]
    out = torch.empty((B, 1), device=x.device, dtype=torch.float32)
    BLOCK_B = 32
    grid = (triton.cdiv(B, BLOCK_B),)
    gemm_div_sum_scale_kernel[grid](
        x, weight, out,
        B, K, H,
        x.stride(0), x.stride(1),
        weight.stride(0), weight.stride(1),
        float(scale),
        BLOCK_B=BLOCK_B,
        num_warps=4,
    )
    return out.to(x.dtype)


class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_size, scaling_factor):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(hidden_size, input_size))
        self.scaling_factor = scaling_factor

    def forward(self, x):
        return gemm_divide_sum_scale(x, self.weight, self.scaling_factor)


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, scaling_factor]
