# corpus: problem=kb_l1_035_groupnorm device=cuda expect=accepted policy=both
# style: three Triton kernels (chunk statistics, a Chan merge with @triton.heuristics BLOCK_C, apply) launched by a helper function, 2-D grid with the group on axis 1, int64 group base, tl.math.rsqrt, nn.GroupNorm kept for its parameters, a dtype/device/dim-guarded F.group_norm fallback with warnings.warn that the problem's inputs never take, __main__ self-test (blind round 13)
# class: 2
import warnings
from typing import Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


# ---------------------------------------------------------------------------
# Pass 1: per (group, chunk) partial statistics: count, chunk mean, chunk M2
# grid = (num_chunks, batch * groups); axis 1 selects the group
# ---------------------------------------------------------------------------
@triton.jit
def _gn_partial_stats_kernel(x_ptr, mean_ptr, m2_ptr, group_numel, num_chunks,
                             CHUNK: tl.constexpr, BLOCK: tl.constexpr):
    chunk = tl.program_id(axis=0)
    grp = tl.program_id(axis=1)
    base = x_ptr + grp.to(tl.int64) * group_numel
    start = chunk * CHUNK
    cnt = tl.minimum(group_numel - start, CHUNK).to(tl.float32)

    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for off in range(0, CHUNK, BLOCK):
        idx = start + off + tl.arange(0, BLOCK)
        v = tl.load(base + idx, mask=idx < group_numel, other=0.0)
        acc += v
    mean = tl.sum(acc, axis=0) / cnt

    acc2 = tl.zeros((BLOCK,), dtype=tl.float32)
    for off in range(0, CHUNK, BLOCK):
        idx = start + off + tl.arange(0, BLOCK)
        m = idx < group_numel
        v = tl.load(base + idx, mask=m, other=0.0)
        d = tl.where(m, v - mean, 0.0)
        acc2 += d * d
    m2 = tl.sum(acc2, axis=0)

    tl.store(mean_ptr + grp * num_chunks + chunk, mean)
    tl.store(m2_ptr + grp * num_chunks + chunk, m2)


# ---------------------------------------------------------------------------
# Pass 2: merge the partials of one group (Chan et al.) -> mean, rstd
# ---------------------------------------------------------------------------
@triton.heuristics({"BLOCK_C": lambda args: triton.next_power_of_2(args["num_chunks"])})
@triton.jit
def _gn_merge_kernel(mean_ptr, m2_ptr, gmean_ptr, grstd_ptr, group_numel, num_chunks, eps,
                     CHUNK: tl.constexpr, BLOCK_C: tl.constexpr):
    grp = tl.program_id(axis=0)
    c = tl.arange(0, BLOCK_C)
    valid = c < num_chunks
    pm = tl.load(mean_ptr + grp * num_chunks + c, mask=valid, other=0.0)
    pm2 = tl.load(m2_ptr + grp * num_chunks + c, mask=valid, other=0.0)
    cnt = tl.where(valid, tl.minimum(group_numel - c * CHUNK, CHUNK), 0).to(tl.float32)

    n = group_numel.to(tl.float32)
    mean = tl.sum(pm * cnt, axis=0) / n
    dm = tl.where(valid, pm - mean, 0.0)
    m2 = tl.sum(pm2 + cnt * dm * dm, axis=0)
    var = m2 / n
    tl.store(gmean_ptr + grp, mean)
    tl.store(grstd_ptr + grp, tl.math.rsqrt(var + eps))


# ---------------------------------------------------------------------------
# Pass 3: y = (x - mean) * rstd * gamma[c] + beta[c]
# ---------------------------------------------------------------------------
@triton.jit
def _gn_apply_kernel(x_ptr, y_ptr, w_ptr, b_ptr, gmean_ptr, grstd_ptr,
                     group_numel, hw, channels_per_group, num_groups,
                     CHUNK: tl.constexpr, BLOCK: tl.constexpr):
    chunk = tl.program_id(axis=0)
    grp = tl.program_id(axis=1)
    g_in_sample = grp % num_groups
    mean = tl.load(gmean_ptr + grp)
    rstd = tl.load(grstd_ptr + grp)
    base = grp.to(tl.int64) * group_numel
    start = chunk * CHUNK
    for off in range(0, CHUNK, BLOCK):
        idx = start + off + tl.arange(0, BLOCK)
        m = idx < group_numel
        ch = g_in_sample * channels_per_group + idx // hw
        gamma = tl.load(w_ptr + ch, mask=m, other=1.0)
        beta = tl.load(b_ptr + ch, mask=m, other=0.0)
        v = tl.load(x_ptr + base + idx, mask=m, other=0.0)
        y = (v - mean) * rstd * gamma + beta
        tl.store(y_ptr + base + idx, y, mask=m)


_CHUNK = 16384
_BLOCK = 2048


def _grid_dims(group_numel: int, n_groups_total: int) -> Tuple[int, int]:
    return triton.cdiv(group_numel, _CHUNK), n_groups_total


def triton_group_norm(x: torch.Tensor, num_groups: int, weight: torch.Tensor, bias: torch.Tensor,
                      eps: float) -> torch.Tensor:
    x = x.contiguous()
    N, C = x.shape[0], x.shape[1]
    hw = x[0, 0].numel()
    cpg = C // num_groups
    group_numel = cpg * hw
    num_chunks, total_groups = _grid_dims(group_numel, N * num_groups)

    part_mean = torch.empty((total_groups, num_chunks), device=x.device, dtype=torch.float32)
    part_m2 = torch.empty_like(part_mean)
    gmean = torch.empty((total_groups,), device=x.device, dtype=torch.float32)
    grstd = torch.empty_like(gmean)
    y = torch.empty_like(x)

    _gn_partial_stats_kernel[(num_chunks, total_groups)](
        x, part_mean, part_m2, group_numel, num_chunks, CHUNK=_CHUNK, BLOCK=_BLOCK, num_warps=8)
    _gn_merge_kernel[(total_groups,)](
        part_mean, part_m2, gmean, grstd, group_numel, num_chunks, eps, CHUNK=_CHUNK)
    _gn_apply_kernel[(num_chunks, total_groups)](
        x, y, weight, bias, gmean, grstd, group_numel, hw, cpg, num_groups,
        CHUNK=_CHUNK, BLOCK=_BLOCK, num_warps=8)
    return y


class ModelNew(nn.Module):
    """Group Normalization with Triton kernels (stats, merge, apply)."""

    def __init__(self, num_features: int, num_groups: int):
        super(ModelNew, self).__init__()
        self.gn = nn.GroupNorm(num_groups=num_groups, num_channels=num_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dtype != torch.float32 or not x.is_cuda or x.dim() < 2:
            warnings.warn(f"ModelNew: input {x.dtype}/{x.device}/{x.dim()}-D not handled by the Triton "
                          f"path; using F.group_norm")
            return F.group_norm(x, self.gn.num_groups, self.gn.weight, self.gn.bias, self.gn.eps)
        return triton_group_norm(x, self.gn.num_groups, self.gn.weight, self.gn.bias, self.gn.eps)


batch_size = 112
features = 64
num_groups = 8
dim1 = 512
dim2 = 512


def get_inputs():
    x = torch.rand(batch_size, features, dim1, dim2)
    return [x]


def get_init_inputs():
    return [features, num_groups]


if __name__ == "__main__":
    torch.manual_seed(0)
    model = ModelNew(features, num_groups).cuda()
    x = torch.rand(8, features, dim1, dim2, device="cuda")
    out = model(x)
    torch.cuda.current_stream().synchronize()
    ref = model.gn(x)
    print("max abs err:", (out - ref).abs().max().item())
