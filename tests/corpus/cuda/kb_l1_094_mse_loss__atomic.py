# corpus: problem=kb_l1_094_mse_loss device=cuda expect=accepted policy=both
# style: grid-stride Triton partial sums, tl.atomic_add, a finalize kernel
# class: 2
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _sq_err_sum_kernel(pred_ptr, targ_ptr, acc_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    # persistent grid-stride loop: each program accumulates its tiles in registers,
    # then does a single fp32 atomic add into the global accumulator
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    lanes = tl.arange(0, BLOCK_SIZE)
    partial = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for start in range(pid * BLOCK_SIZE, n_elements, nprog * BLOCK_SIZE):
        offs = start + lanes
        mask = offs < n_elements
        p = tl.load(pred_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        t = tl.load(targ_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        d = p - t
        partial += d * d
    tl.atomic_add(acc_ptr, tl.sum(partial, axis=0))


@triton.jit
def _mean_finalize_kernel(acc_ptr, out_ptr, n_elements):
    total = tl.load(acc_ptr)
    tl.store(out_ptr, (total / n_elements).to(out_ptr.dtype.element_ty))


def triton_mse(predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    assert predictions.shape == targets.shape
    assert predictions.is_cuda and targets.is_cuda
    p = predictions.contiguous().view(-1)
    t = targets.contiguous().view(-1)
    n = p.numel()
    acc = torch.zeros(1, device=p.device, dtype=torch.float32)
    out = torch.empty((), device=p.device, dtype=predictions.dtype)
    BLOCK_SIZE = 2048
    sms = torch.cuda.get_device_properties(p.device).multi_processor_count
    grid = (max(1, min(triton.cdiv(n, BLOCK_SIZE), sms * 4)),)
    if n > 0:
        _sq_err_sum_kernel[grid](p, t, acc, n, BLOCK_SIZE=BLOCK_SIZE, num_warps=8)
    # n == 0 gives 0/0 = nan, like torch.mean of an empty tensor
    _mean_finalize_kernel[(1,)](acc, out, n)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return triton_mse(predictions, targets)
