# corpus: problem=kb_l3_001_mlp device=cuda expect=accepted policy=both
# style: Triton autotune over GEMV tiles, fused bias + ReLU through APPLY_RELU: tl.constexpr, keeps the reference nn.Sequential for its weights
# class: 2
import torch
import torch.nn as nn
import triton
import triton.language as tl

batch_size = 1
input_size = 1000
layer_sizes = [400, 800]
output_size = 500


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_N": 16, "BLOCK_K": 256}, num_warps=4),
        triton.Config({"BLOCK_N": 32, "BLOCK_K": 128}, num_warps=4),
        triton.Config({"BLOCK_N": 64, "BLOCK_K": 64}, num_warps=4),
        triton.Config({"BLOCK_N": 32, "BLOCK_K": 256}, num_warps=8),
        triton.Config({"BLOCK_N": 64, "BLOCK_K": 128}, num_warps=8),
    ],
    key=["N", "K"],
)
@triton.jit
def linear_bias_act_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr,
    M, N, K,
    stride_xm, stride_wn, stride_ym,
    APPLY_RELU: tl.constexpr,
    BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    """y[m, n] = act( sum_k x[m, k] * W[n, k] + b[n] )  -- GEMV-style, one row m per program column."""
    pid_n = tl.program_id(0)
    m = tl.program_id(1)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    n_mask = offs_n < N

    acc = tl.zeros((BLOCK_N, BLOCK_K), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        offs_k = k0 + tl.arange(0, BLOCK_K)
        k_mask = offs_k < K
        xv = tl.load(x_ptr + m * stride_xm + offs_k, mask=k_mask, other=0.0)
        wv = tl.load(w_ptr + offs_n[:, None] * stride_wn + offs_k[None, :],
                     mask=n_mask[:, None] & k_mask[None, :], other=0.0)
        acc += wv * xv[None, :]

    y = tl.sum(acc, axis=1)
    y += tl.load(b_ptr + offs_n, mask=n_mask, other=0.0)
    if APPLY_RELU:
        y = tl.maximum(y, 0.0)
    tl.store(y_ptr + m * stride_ym + offs_n, y, mask=n_mask)


def fused_linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, relu: bool) -> torch.Tensor:
    x = x.contiguous()
    weight = weight.contiguous()
    M, K = x.shape
    N = weight.shape[0]
    y = torch.empty((M, N), device=x.device, dtype=torch.float32)
    grid = lambda META: (triton.cdiv(N, META["BLOCK_N"]), M)
    linear_bias_act_kernel[grid](
        x, weight, bias, y,
        M, N, K,
        x.stride(0), weight.stride(0), y.stride(0),
        APPLY_RELU=relu,
    )
    return y


class ModelNew(nn.Module):
    def __init__(self, input_size, layer_sizes, output_size):
        super().__init__()
        layers = []
        current = input_size
        for size in layer_sizes:
            layers.append(nn.Linear(current, size))
            layers.append(nn.ReLU())
            current = size
        layers.append(nn.Linear(current, output_size))
        self.network = nn.Sequential(*layers)
        self.linears = [m for m in self.network if isinstance(m, nn.Linear)]

    def forward(self, x):
        h = x
        last = len(self.linears) - 1
        for i, lin in enumerate(self.linears):
            # every hidden Linear is followed by a ReLU in the reference: fuse it
            h = fused_linear(h, lin.weight, lin.bias, relu=(i < last))
        return h


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, layer_sizes, output_size]
