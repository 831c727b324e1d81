# corpus: problem=kb_l2_076_gemm_add_relu device=cuda expect=accepted policy=kernelbench
# style: nn.Linear, then an in-place Triton bias+ReLU epilogue
# class: 2,3
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def bias_relu_epilogue_kernel(
    y_ptr, bias_ptr, out_ptr,
    M, N,
    stride_ym, stride_yn,
    stride_om, stride_on,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rm[:, None] < M) & (rn[None, :] < N)

    y = tl.load(y_ptr + rm[:, None] * stride_ym + rn[None, :] * stride_yn, mask=mask, other=0.0)
    b = tl.load(bias_ptr + rn, mask=rn < N, other=0.0)
    z = y + b[None, :]
    z = tl.where(z > 0, z, 0.0)
    tl.store(out_ptr + rm[:, None] * stride_om + rn[None, :] * stride_on, z, mask=mask)


class ModelNew(nn.Module):
    """GEMM stays on cuBLAS (nn.Linear); bias add + ReLU are fused into one Triton epilogue
    that runs in place on the GEMM output."""

    def __init__(self, in_features: int, out_features: int, bias_shape: tuple):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.gemm(x)
        N = y.shape[-1]
        y2d = y.reshape(-1, N)
        M = y2d.shape[0]
        bias = self.bias.contiguous()
        assert bias.numel() == N, "bias must broadcast over the last dim"
        if M == 0 or N == 0:
            return y
        grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_N"]))
        bias_relu_epilogue_kernel[grid](
            y2d, bias, y2d,
            M, N,
            y2d.stride(0), y2d.stride(1),
            y2d.stride(0), y2d.stride(1),
            BLOCK_M=32, BLOCK_N=128,
            num_warps=4,
        )
        return y2d.view(y.shape)
