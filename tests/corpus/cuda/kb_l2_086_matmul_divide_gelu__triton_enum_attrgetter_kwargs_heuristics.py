# corpus: problem=kb_l2_086_matmul_divide_gelu device=cuda expect=accepted policy=both
# style: Triton autotune + heuristics, IEEE tl.dot, erf epilogue, an Enum mapped to a constexpr flag, operator.attrgetter, **kwargs forwarding (blind round 12)
# class: 2
import enum
import operator

import torch
import torch.nn as nn
import triton
import triton.language as tl

# y = gelu((x @ W^T + b) / divisor) in one Triton kernel: tl.dot main loop
# (full fp32, input_precision="ieee") with bias, divide and GELU in the epilogue.


class GeluApprox(str, enum.Enum):
    NONE = "none"   # exact erf form (F.gelu default)
    TANH = "tanh"


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8}, num_warps=4, num_stages=3),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8}, num_warps=4, num_stages=3),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8}, num_warps=4, num_stages=3),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8}, num_warps=8, num_stages=3),
    ],
    key=["M", "N", "K"],
)
@triton.heuristics({"EVEN_K": lambda args: args["K"] % args["BLOCK_K"] == 0})
@triton.jit
def _linear_div_gelu_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr,
    M, N, K,
    stride_xm, stride_xk, stride_wn, stride_wk, stride_ym, stride_yn,
    divisor,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr, EVEN_K: tl.constexpr, APPROX_TANH: tl.constexpr,
):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :] * stride_xk
    w_ptrs = w_ptr + offs_n[None, :] * stride_wn + offs_k[:, None] * stride_wk  # W^T tile [BLOCK_K, BLOCK_N]
    mask_m = offs_m[:, None] < M
    mask_n = offs_n[None, :] < N

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kt in range(0, tl.cdiv(K, BLOCK_K)):
        if EVEN_K:
            a = tl.load(x_ptrs, mask=mask_m, other=0.0)
            b = tl.load(w_ptrs, mask=mask_n, other=0.0)
        else:
            k_left = K - kt * BLOCK_K
            a = tl.load(x_ptrs, mask=mask_m & (offs_k[None, :] < k_left), other=0.0)
            b = tl.load(w_ptrs, mask=mask_n & (offs_k[:, None] < k_left), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
        x_ptrs += BLOCK_K * stride_xk
        w_ptrs += BLOCK_K * stride_wk

    bias = tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0)
    v = (acc + bias[None, :]) / divisor
    if APPROX_TANH:
        z = 0.7978845608028654 * (v + 0.044715 * v * v * v)
        t = 2.0 * tl.sigmoid(2.0 * z) - 1.0
        g = 0.5 * v * (1.0 + t)
    else:
        g = 0.5 * v * (1.0 + tl.math.erf(v * 0.7071067811865476))
    y_ptrs = y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn
    tl.store(y_ptrs, g, mask=mask_m & mask_n)


def linear_div_gelu(x, weight, bias, divisor, approximate=GeluApprox.NONE, **launch_kwargs):
    assert x.is_cuda and x.dtype == torch.float32 and weight.dtype == torch.float32
    M, K = x.shape
    N = weight.shape[0]
    y = torch.empty((M, N), device=x.device, dtype=x.dtype)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)
    _linear_div_gelu_kernel[grid](
        x, weight, bias, y,
        M, N, K,
        x.stride(0), x.stride(1), weight.stride(0), weight.stride(1), y.stride(0), y.stride(1),
        float(divisor),
        APPROX_TANH=(GeluApprox(approximate) is GeluApprox.TANH),
        **launch_kwargs,
    )
    return y


_linear_params = operator.attrgetter("linear.weight", "linear.bias")


class ModelNew(nn.Module):
    def __init__(self, input_size, output_size, divisor):
        super(ModelNew, self).__init__()
        self.linear = nn.Linear(input_size, output_size)
        self.divisor = divisor
        self.approximate = GeluApprox.NONE

    def forward(self, x, **kwargs):
        weight, bias = _linear_params(self)
        return linear_div_gelu(x.contiguous(), weight, bias, self.divisor, self.approximate, **kwargs)


batch_size = 1024
input_size = 8192
output_size = 8192
divisor = 10.0


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, output_size, divisor]
