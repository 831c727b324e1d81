# corpus: problem=kb_l1_033_batchnorm device=cuda expect=accepted policy=both
# style: nn.BatchNorm2d subclass; Welford tl.reduce; running-stat update, num_batches_tracked and the eval-mode inverse std in Triton kernels
# class: 2
import torch
import torch.nn as nn
import triton
import triton.language as tl


# ---------------------------------------------------------------------------
# Pass 1: per-(channel, sample) partial statistics.
# Grid is 2-D: program_id(0) = channel, program_id(1) = sample.  Each program
# owns one contiguous H*W plane and produces (count, mean, M2) for it with a
# numerically safe two-sweep (mean first, then centred sum of squares).
# ---------------------------------------------------------------------------
@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 1024}, num_warps=4, num_stages=2),
        triton.Config({"BLOCK": 2048}, num_warps=8, num_stages=2),
        triton.Config({"BLOCK": 4096}, num_warps=8, num_stages=3),
    ],
    key=["HW"],
)
@triton.jit
def bn_partial_stats_kernel(x_ptr, pmean_ptr, pm2_ptr, C, HW, BLOCK: tl.constexpr):
    c = tl.program_id(0)
    n = tl.program_id(1)
    base = x_ptr + (n.to(tl.int64) * C + c) * HW

    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, HW, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(base + offs, mask=offs < HW, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / HW

    acc2 = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, HW, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        m = offs < HW
        d = tl.load(base + offs, mask=m, other=0.0).to(tl.float32) - mean
        acc2 += tl.where(m, d * d, 0.0)
    m2 = tl.sum(acc2, axis=0)

    tl.store(pmean_ptr + c * tl.num_programs(1) + n, mean)
    tl.store(pm2_ptr + c * tl.num_programs(1) + n, m2)


@triton.jit
def _welford_combine(mean_a, m2_a, n_a, mean_b, m2_b, n_b):
    # Chan et al. parallel variance update; empty partitions (n == 0) are handled by the where.
    n = n_a + n_b
    delta = mean_b - mean_a
    w_b = tl.where(n == 0, 0.0, n_b / n)
    return mean_a + delta * w_b, m2_a + m2_b + delta * delta * n_a * w_b, n


# ---------------------------------------------------------------------------
# Pass 2: merge the N partials of every channel (tl.reduce with a Welford
# combine), emit mean / invstd for normalisation and unbiased var for the
# running-stat update.
# ---------------------------------------------------------------------------
@triton.jit
def bn_finalize_kernel(pmean_ptr, pm2_ptr, mean_ptr, invstd_ptr, rmean_ptr, rvar_ptr, nbt_ptr,
                       NP, HW, eps, momentum,
                       UPDATE_RUNNING: tl.constexpr, CUMULATIVE: tl.constexpr, BLOCK_P: tl.constexpr):
    c = tl.program_id(0)
    offs = tl.arange(0, BLOCK_P)
    valid = offs < NP
    pm = tl.load(pmean_ptr + c * NP + offs, mask=valid, other=0.0)
    pm2 = tl.load(pm2_ptr + c * NP + offs, mask=valid, other=0.0)
    cnt = tl.where(valid, HW * 1.0, 0.0)
    mean, m2, total = tl.reduce((pm, pm2, cnt), 0, _welford_combine)
    var = m2 / total
    tl.store(mean_ptr + c, mean)
    tl.store(invstd_ptr + c, 1.0 / tl.sqrt(var + eps))
    if UPDATE_RUNNING:
        # running stats use the unbiased variance, exactly like nn.BatchNorm2d
        if CUMULATIVE:
            m = 1.0 / (tl.load(nbt_ptr).to(tl.float32) + 1.0)
        else:
            m = momentum
        uvar = m2 / tl.maximum(total - 1.0, 1.0)
        rm = tl.load(rmean_ptr + c)
        rv = tl.load(rvar_ptr + c)
        tl.store(rmean_ptr + c, (1.0 - m) * rm + m * mean)
        tl.store(rvar_ptr + c, (1.0 - m) * rv + m * uvar)


@triton.jit
def bn_count_kernel(nbt_ptr):
    # num_batches_tracked += 1 (separate launch so the finalize programs all see the old value)
    tl.store(nbt_ptr, tl.load(nbt_ptr) + 1)


@triton.jit
def bn_eval_stats_kernel(rmean_ptr, rvar_ptr, mean_ptr, invstd_ptr, C, eps, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < C
    tl.store(mean_ptr + offs, tl.load(rmean_ptr + offs, mask=m, other=0.0).to(tl.float32), mask=m)
    rv = tl.load(rvar_ptr + offs, mask=m, other=1.0).to(tl.float32)
    tl.store(invstd_ptr + offs, 1.0 / tl.sqrt(rv + eps), mask=m)


# ---------------------------------------------------------------------------
# Pass 3: y = (x - mean[c]) * invstd[c] * weight[c] + bias[c]
# 2-D grid: program_id(0) = (n, c) plane, program_id(1) = block inside the plane.
# ---------------------------------------------------------------------------
@triton.jit
def bn_apply_kernel(x_ptr, y_ptr, mean_ptr, invstd_ptr, w_ptr, b_ptr, C, HW,
                    HAS_AFFINE: tl.constexpr, BLOCK: tl.constexpr):
    plane = tl.program_id(0)
    c = plane % C
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    m = offs < HW
    base = plane.to(tl.int64) * HW
    x = tl.load(x_ptr + base + offs, mask=m, other=0.0).to(tl.float32)
    mean = tl.load(mean_ptr + c)
    invstd = tl.load(invstd_ptr + c)
    y = (x - mean) * invstd
    if HAS_AFFINE:
        y = y * tl.load(w_ptr + c) + tl.load(b_ptr + c)
    tl.store(y_ptr + base + offs, y.to(y_ptr.dtype.element_ty), mask=m)


class TritonBatchNorm2d(nn.BatchNorm2d):
    """nn.BatchNorm2d whose forward runs on Triton kernels (same parameters/buffers/state_dict)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        assert x.dim() == 4 and x.shape[1] == self.num_features
        x = x.contiguous()
        N, C, H, W = x.shape
        HW = H * W
        use_batch_stats = self.training or not self.track_running_stats

        mean = torch.empty(C, device=x.device, dtype=torch.float32)
        invstd = torch.empty_like(mean)
        if use_batch_stats:
            pmean = torch.empty((C, N), device=x.device, dtype=torch.float32)
            pm2 = torch.empty_like(pmean)
            bn_partial_stats_kernel[(C, N)](x, pmean, pm2, C, HW)
            update = self.training and self.track_running_stats
            bn_finalize_kernel[(C,)](
                pmean, pm2, mean, invstd,
                self.running_mean if update else mean, self.running_var if update else mean,
                self.num_batches_tracked if update else mean,
                N, HW, self.eps, 0.0 if self.momentum is None else self.momentum,
                UPDATE_RUNNING=update, CUMULATIVE=self.momentum is None,
                BLOCK_P=max(triton.next_power_of_2(N), 2))
            if update:
                bn_count_kernel[(1,)](self.num_batches_tracked)
        else:
            bn_eval_stats_kernel[(1,)](self.running_mean, self.running_var, mean, invstd, C, self.eps,
                                       BLOCK=triton.next_power_of_2(C))
        y = torch.empty_like(x)
        BLOCK = 2048
        w = self.weight if self.affine else mean
        b = self.bias if self.affine else mean
        bn_apply_kernel[(N * C, triton.cdiv(HW, BLOCK))](
            x, y, mean, invstd, w, b, C, HW, HAS_AFFINE=self.affine, BLOCK=BLOCK, num_warps=8)
        return y


class ModelNew(nn.Module):
    def __init__(self, num_features: int):
        super().__init__()
        self.bn = TritonBatchNorm2d(num_features=num_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn(x)
