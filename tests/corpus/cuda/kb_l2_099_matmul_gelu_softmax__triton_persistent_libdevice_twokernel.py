# corpus: problem=kb_l2_099_matmul_gelu_softmax device=cuda expect=accepted policy=both
# style: two Triton kernels: persistent autotuned matmul with libdevice.erf GELU, then a persistent online row softmax (libdevice.exp) (blind round 8; tl.dot made IEEE fp32: its TF32 default failed the fp32 budget on the H100)
# class: 2
import torch
import torch.nn as nn
import triton
import triton.language as tl
from triton.language.extra import libdevice

batch_size = 1024
in_features = 8192
out_features = 8192


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8}, num_stages=3, num_warps=8),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 32, "GROUP_M": 8}, num_stages=3, num_warps=8),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8}, num_stages=4, num_warps=4),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}, num_stages=3, num_warps=4),
    ],
    key=["M", "N", "K"],
)
@triton.jit
def persistent_linear_gelu_kernel(
    x_ptr, w_ptr, b_ptr, h_ptr,
    M, N, K,
    stride_xm, stride_xk, stride_wn, stride_wk, stride_hm, stride_hn,
    NUM_SMS: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    """h = gelu(x @ w^T + b) (exact erf GELU). Persistent: NUM_SMS programs loop over all output tiles."""
    start_pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_tiles = num_pid_m * num_pid_n
    num_pid_in_group = GROUP_M * num_pid_n
    offs_k_base = tl.arange(0, BLOCK_K)

    for tile_id in range(start_pid, num_tiles, NUM_SMS):
        group_id = tile_id // num_pid_in_group
        first_pid_m = group_id * GROUP_M
        group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
        pid_m = first_pid_m + ((tile_id % num_pid_in_group) % group_size_m)
        pid_n = (tile_id % num_pid_in_group) // group_size_m

        offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        mask_m = offs_m < M
        mask_n = offs_n < N

        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k0 in range(0, K, BLOCK_K):
            offs_k = k0 + offs_k_base
            a = tl.load(x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :] * stride_xk,
                        mask=mask_m[:, None] & (offs_k[None, :] < K), other=0.0)
            b = tl.load(w_ptr + offs_k[:, None] * stride_wk + offs_n[None, :] * stride_wn,
                        mask=(offs_k[:, None] < K) & mask_n[None, :], other=0.0)
            acc = tl.dot(a, b, acc, input_precision="ieee")

        acc += tl.load(b_ptr + offs_n, mask=mask_n, other=0.0)[None, :]
        # exact GELU: 0.5 * x * (1 + erf(x / sqrt(2)))
        acc = 0.5 * acc * (1.0 + libdevice.erf(acc * 0.7071067811865476))
        tl.store(h_ptr + offs_m[:, None] * stride_hm + offs_n[None, :] * stride_hn,
                 acc, mask=mask_m[:, None] & mask_n[None, :])


@triton.jit
def row_softmax_kernel(in_ptr, out_ptr, n_rows, n_cols, stride_in, stride_out,
                       BLOCK_N: tl.constexpr):
    """Softmax over dim=1. Persistent over rows; each row is processed in BLOCK_N chunks with an
    online max/sum pass followed by a normalize pass, so any row length works."""
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_N)
    for row in range(row_start, n_rows, row_step):
        in_row = in_ptr + row * stride_in
        m = tl.full([BLOCK_N], float("-inf"), dtype=tl.float32)
        s = tl.zeros([BLOCK_N], dtype=tl.float32)
        for c0 in range(0, n_cols, BLOCK_N):
            offs = c0 + cols
            v = tl.load(in_row + offs, mask=offs < n_cols, other=float("-inf")).to(tl.float32)
            m_new = tl.maximum(m, v)
            # guard lanes that have only seen -inf so far (avoid inf - inf = nan)
            scale = tl.where(m_new == float("-inf"), 0.0, libdevice.exp(m - m_new))
            s = s * scale + tl.where(m_new == float("-inf"), 0.0, libdevice.exp(v - m_new))
            m = m_new
        row_max = tl.max(m, 0)
        row_sum = tl.sum(tl.where(m == float("-inf"), 0.0, s * libdevice.exp(m - row_max)), 0)
        inv = 1.0 / row_sum
        out_row = out_ptr + row * stride_out
        for c0 in range(0, n_cols, BLOCK_N):
            offs = c0 + cols
            v = tl.load(in_row + offs, mask=offs < n_cols, other=float("-inf")).to(tl.float32)
            tl.store(out_row + offs, libdevice.exp(v - row_max) * inv, mask=offs < n_cols)


_NUM_SMS = None


def _num_sms(device) -> int:
    global _NUM_SMS
    if _NUM_SMS is None:
        _NUM_SMS = torch.cuda.get_device_properties(device).multi_processor_count
    return _NUM_SMS


def linear_gelu_softmax(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    assert x.dim() == 2 and x.is_cuda
    M, K = x.shape
    N = weight.shape[0]
    num_sms = _num_sms(x.device)
    h = torch.empty((M, N), device=x.device, dtype=torch.float32)
    grid = lambda meta: (min(num_sms, triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"])),)
    persistent_linear_gelu_kernel[grid](
        x, weight, bias, h, M, N, K,
        x.stride(0), x.stride(1), weight.stride(0), weight.stride(1), h.stride(0), h.stride(1),
        NUM_SMS=num_sms,
    )
    out = torch.empty_like(h)
    BLOCK = min(4096, triton.next_power_of_2(N))
    softmax_grid = (min(M, num_sms * 4),)
    row_softmax_kernel[softmax_grid](h, out, M, N, h.stride(0), out.stride(0), BLOCK_N=BLOCK, num_warps=8)
    return out.to(x.dtype)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return linear_gelu_softmax(x, self.linear.weight, self.linear.bias)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
