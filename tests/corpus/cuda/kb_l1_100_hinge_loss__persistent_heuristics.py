# corpus: problem=kb_l1_100_hinge_loss device=cuda expect=accepted policy=both
# style: Triton persistent grid (SM count x 4), @triton.heuristics EVEN_N fast path, stride-0 broadcast targets, two-stage reduction
# class: 2
import torch
import torch.nn as nn
import triton
import triton.language as tl
from torch.distributions import Pareto

batch_size = 32768
input_shape = (32768,)
dim = 1


@triton.heuristics({"EVEN_N": lambda args: args["n_cols"] % args["BLOCK_N"] == 0})
@triton.jit
def hinge_partial_kernel(
    pred_ptr, tgt_ptr, partial_ptr,
    n_rows, n_cols,
    stride_pr, stride_pc,
    stride_tr, stride_tc,
    NUM_PROGRAMS: tl.constexpr,
    BLOCK_N: tl.constexpr,
    EVEN_N: tl.constexpr,
):
    # persistent grid: each program walks tiles pid, pid + NUM_PROGRAMS, ...
    pid = tl.program_id(0)
    tiles_per_row = tl.cdiv(n_cols, BLOCK_N)
    num_tiles = n_rows * tiles_per_row
    cols0 = tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for tile in range(pid, num_tiles, NUM_PROGRAMS):
        row = (tile // tiles_per_row).to(tl.int64)
        cols = (tile % tiles_per_row) * BLOCK_N + cols0
        p_ptrs = pred_ptr + row * stride_pr + cols * stride_pc
        t_ptrs = tgt_ptr + row * stride_tr + cols * stride_tc
        if EVEN_N:
            p = tl.load(p_ptrs)
            t = tl.load(t_ptrs)
            acc += tl.maximum(1.0 - p * t, 0.0)
        else:
            mask = cols < n_cols
            p = tl.load(p_ptrs, mask=mask, other=0.0)
            t = tl.load(t_ptrs, mask=mask, other=0.0)
            acc += tl.where(mask, tl.maximum(1.0 - p * t, 0.0), 0.0)
    tl.store(partial_ptr + pid, tl.sum(acc, axis=0))


@triton.jit
def finalize_mean_kernel(partial_ptr, out_ptr, n_partials, inv_numel, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    vals = tl.load(partial_ptr + offs, mask=offs < n_partials, other=0.0)
    tl.store(out_ptr, tl.sum(vals, axis=0) * inv_numel)


_SM_COUNT = {}


def _num_programs(device: torch.device) -> int:
    idx = device.index if device.index is not None else torch.cuda.current_device()
    if idx not in _SM_COUNT:
        _SM_COUNT[idx] = torch.cuda.get_device_properties(idx).multi_processor_count
    return _SM_COUNT[idx] * 4


def hinge_loss_mean(predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    shape = torch.broadcast_shapes(predictions.shape, targets.shape)
    p = predictions.expand(shape)
    t = targets.to(predictions.dtype).expand(shape)
    if len(shape) != 2:
        p = p.reshape(-1, shape[-1]) if len(shape) > 0 else p.reshape(1, 1)
        t = t.reshape(-1, shape[-1]) if len(shape) > 0 else t.reshape(1, 1)
    n_rows, n_cols = p.shape
    numel = n_rows * n_cols

    nprog = _num_programs(p.device)
    partials = torch.empty(nprog, device=p.device, dtype=torch.float32)
    out = torch.empty((), device=p.device, dtype=torch.float32)
    hinge_partial_kernel[(nprog,)](
        p, t, partials,
        n_rows, n_cols,
        p.stride(0), p.stride(1),
        t.stride(0), t.stride(1),
        NUM_PROGRAMS=nprog, BLOCK_N=2048,
        num_warps=8,
    )
    finalize_mean_kernel[(1,)](partials, out, nprog, 1.0 / numel,
                               BLOCK=triton.next_power_of_2(nprog))
    return out


class ModelNew(nn.Module):
    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return hinge_loss_mean(predictions, targets)


def get_inputs():
    predictions = Pareto(0.01, 1.5).sample((batch_size, *input_shape))
    targets = torch.randint(0, 2, (batch_size,)).float() * 2 - 1
    return [predictions, targets]


def get_init_inputs():
    return []
