# corpus: problem=kb_l3_008_resnet_basic_block device=cpu expect=accepted policy=kernelbench
# style: a helper returning (scale, shift), a statistics kernel returning (mean, var), residual add + BN + ReLU fused, running stats updated
# class: 2,3,8
from typing import Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

bn_cpp = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <tuple>

static void check_nchw(const torch::Tensor& t, const char* what) {
    TORCH_CHECK(t.device().is_cpu(), what, ": CPU tensor expected");
    TORCH_CHECK(t.scalar_type() == torch::kFloat32, what, ": float32 expected");
    TORCH_CHECK(t.dim() == 4, what, ": NCHW tensor expected");
}

// Per-channel mean and biased variance of an NCHW tensor (two-pass, double accumulation).
std::tuple<torch::Tensor, torch::Tensor> channel_stats(torch::Tensor x) {
    check_nchw(x, "channel_stats");
    auto xc = x.contiguous();
    const int64_t N = xc.size(0), C = xc.size(1), HW = xc.size(2) * xc.size(3);
    TORCH_CHECK(N * HW > 0, "channel_stats: empty input");
    auto mean = torch::empty({C}, xc.options());
    auto var = torch::empty({C}, xc.options());
    const float* p = xc.data_ptr<float>();
    float* mp = mean.data_ptr<float>();
    float* vp = var.data_ptr<float>();
    const double count = static_cast<double>(N * HW);
    at::parallel_for(0, C, 1, [&](int64_t c0, int64_t c1) {
        for (int64_t c = c0; c < c1; ++c) {
            double s = 0.0;
            for (int64_t n = 0; n < N; ++n) {
                const float* row = p + (n * C + c) * HW;
                float part = 0.f;
                for (int64_t i = 0; i < HW; ++i) part += row[i];
                s += part;
            }
            const double mu = s / count;
            double ss = 0.0;
            for (int64_t n = 0; n < N; ++n) {
                const float* row = p + (n * C + c) * HW;
                double part = 0.0;
                for (int64_t i = 0; i < HW; ++i) { const double d = row[i] - mu; part += d * d; }
                ss += part;
            }
            mp[c] = static_cast<float>(mu);
            vp[c] = static_cast<float>(ss / count);
        }
    });
    return std::make_tuple(mean, var);
}

// y = x * scale[c] + shift[c], optionally ReLU.
torch::Tensor affine_act(torch::Tensor x, torch::Tensor scale, torch::Tensor shift, bool relu) {
    check_nchw(x, "affine_act");
    auto xc = x.contiguous();
    auto sc = scale.contiguous(), sh = shift.contiguous();
    const int64_t N = xc.size(0), C = xc.size(1), HW = xc.size(2) * xc.size(3);
    TORCH_CHECK(sc.numel() == C && sh.numel() == C, "affine_act: per-channel coefficients expected");
    auto y = torch::empty_like(xc);
    const float* xp = xc.data_ptr<float>();
    const float* a = sc.data_ptr<float>();
    const float* b = sh.data_ptr<float>();
    float* yp = y.data_ptr<float>();
    at::parallel_for(0, N * C, 1, [&](int64_t i0, int64_t i1) {
        for (int64_t nc = i0; nc < i1; ++nc) {
            const int64_t c = nc % C;
            const float av = a[c], bv = b[c];
            const float* xr = xp + nc * HW;
            float* yr = yp + nc * HW;
            if (relu) {
                for (int64_t i = 0; i < HW; ++i) { const float v = xr[i] * av + bv; yr[i] = v > 0.f ? v : 0.f; }
            } else {
                for (int64_t i = 0; i < HW; ++i) yr[i] = xr[i] * av + bv;
            }
        }
    });
    return y;
}

// out = relu( (x * sx[c] + tx[c]) + (r * sr[c] + tr[c]) ): second BN, shortcut BN, residual add and ReLU.
torch::Tensor affine_add_relu(torch::Tensor x, torch::Tensor sx, torch::Tensor tx,
                              torch::Tensor r, torch::Tensor sr, torch::Tensor tr) {
    check_nchw(x, "affine_add_relu");
    check_nchw(r, "affine_add_relu");
    TORCH_CHECK(x.sizes() == r.sizes(), "affine_add_relu: residual shape mismatch");
    auto xc = x.contiguous(), rc = r.contiguous();
    auto sxc = sx.contiguous(), txc = tx.contiguous(), src = sr.contiguous(), trc = tr.contiguous();
    const int64_t N = xc.size(0), C = xc.size(1), HW = xc.size(2) * xc.size(3);
    TORCH_CHECK(sxc.numel() == C && txc.numel() == C && src.numel() == C && trc.numel() == C,
                "affine_add_relu: per-channel coefficients expected");
    auto y = torch::empty_like(xc);
    const float* xp = xc.data_ptr<float>();
    const float* rp = rc.data_ptr<float>();
    float* yp = y.data_ptr<float>();
    const float *A = sxc.data_ptr<float>(), *Bx = txc.data_ptr<float>();
    const float *R = src.data_ptr<float>(), *Br = trc.data_ptr<float>();
    at::parallel_for(0, N * C, 1, [&](int64_t i0, int64_t i1) {
        for (int64_t nc = i0; nc < i1; ++nc) {
            const int64_t c = nc % C;
            const float a = A[c], ra = R[c], bsum = Bx[c] + Br[c];
            const float* xr = xp + nc * HW;
            const float* rr = rp + nc * HW;
            float* yr = yp + nc * HW;
            for (int64_t i = 0; i < HW; ++i) {
                const float v = xr[i] * a + rr[i] * ra + bsum;
                yr[i] = v > 0.f ? v : 0.f;
            }
        }
    });
    return y;
}
"""

bn_ext = load_inline(
    name="kb_l3_008_resnet_basic_block__bn_stats_residual",
    cpp_sources=bn_cpp,
    functions=["channel_stats", "affine_act", "affine_add_relu"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    expansion = 1

    def __init__(self, in_channels: int, out_channels: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, out_channels, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.downsample = nn.Sequential(
            nn.Conv2d(in_channels, out_channels * self.expansion, 1, stride=stride, bias=False),
            nn.BatchNorm2d(out_channels * self.expansion),
        )
        self.stride = stride

    def _bn_coeffs(self, bn: nn.BatchNorm2d, x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        """Returns per-channel (scale, shift) so that bn(x) == x * scale + shift.

        Training mode uses the batch statistics from the C++ kernel and updates the running buffers like
        nn.BatchNorm2d does; eval mode uses the running statistics.
        """
        if self.training or not bn.track_running_stats:
            mean, var = bn_ext.channel_stats(x)
            if self.training and bn.track_running_stats:
                with torch.no_grad():
                    bn.num_batches_tracked.add_(1)
                    momentum = (1.0 / float(bn.num_batches_tracked)) if bn.momentum is None else bn.momentum
                    n = x.numel() // x.size(1)
                    unbiased = var * (n / max(n - 1, 1))
                    bn.running_mean.mul_(1.0 - momentum).add_(mean, alpha=momentum)
                    bn.running_var.mul_(1.0 - momentum).add_(unbiased, alpha=momentum)
        else:
            mean, var = bn.running_mean, bn.running_var
        scale = torch.rsqrt(var + bn.eps)
        if bn.affine:
            scale = scale * bn.weight
        shift = -mean * scale
        if bn.affine:
            shift = shift + bn.bias
        return scale.contiguous(), shift.contiguous()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shortcut_conv, shortcut_bn = self.downsample[0], self.downsample[1]
        identity_raw = shortcut_conv(x)
        id_scale, id_shift = self._bn_coeffs(shortcut_bn, identity_raw)

        out = self.conv1(x)
        s1, t1 = self._bn_coeffs(self.bn1, out)
        out = bn_ext.affine_act(out, s1, t1, True)

        out = self.conv2(out)
        s2, t2 = self._bn_coeffs(self.bn2, out)
        # bn2(out) + bn_down(identity), then ReLU: one pass in C++.
        return bn_ext.affine_add_relu(out, s2, t2, identity_raw, id_scale, id_shift)
