# corpus: problem=kb_l3_008_resnet_basic_block device=cpu expect=accepted policy=kernelbench
# style: PyTorch's convolutions kept, batch norm + ReLU (+ residual) fused in OpenMP C++ with the running statistics updated through data_ptr<float>() pointers; a float* rm in one branch beside auto rm = running_mean.contiguous() in the other
# class: 3,7
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

bn_cpp_source = r"""
#include <torch/extension.h>
#include <omp.h>
#include <cmath>
#include <vector>

// Per-channel batch-norm affine coefficients for an NCHW tensor.
// Training: batch statistics (biased variance for normalisation), running buffers updated in place
// with the unbiased variance. Eval: running statistics.
// Returns a (2, C) tensor: row 0 = scale, row 1 = shift, so that bn(x) = x * scale + shift.
torch::Tensor bn_coeffs(torch::Tensor x, torch::Tensor gamma, torch::Tensor beta,
                        torch::Tensor running_mean, torch::Tensor running_var,
                        bool training, double momentum, double eps) {
    TORCH_CHECK(x.dim() == 4, "expected NCHW");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "float32 only");
    x = x.contiguous();
    const int64_t N = x.size(0), C = x.size(1), HW = x.size(2) * x.size(3);
    auto g = gamma.contiguous();
    auto b = beta.contiguous();
    auto coeffs = torch::empty({2, C}, x.options());
    float* scale = coeffs.data_ptr<float>();
    float* shift = scale + C;
    const float* gp = g.data_ptr<float>();
    const float* bp = b.data_ptr<float>();

    if (training) {
        TORCH_CHECK(running_mean.is_contiguous() && running_var.is_contiguous(), "running stats must be contiguous");
        const float* xp = x.data_ptr<float>();
        float* rm = running_mean.data_ptr<float>();
        float* rv = running_var.data_ptr<float>();
        const int64_t count = N * HW;
        TORCH_CHECK(count > 1, "batch norm needs more than one value per channel in training");
        #pragma omp parallel for schedule(dynamic)
        for (int64_t c = 0; c < C; ++c) {
            double s = 0.0, ss = 0.0;
            for (int64_t n = 0; n < N; ++n) {
                const float* p = xp + (n * C + c) * HW;
                double ls = 0.0, lss = 0.0;
                for (int64_t i = 0; i < HW; ++i) {
                    const double v = p[i];
                    ls += v;
                    lss += v * v;
                }
                s += ls;
                ss += lss;
            }
            const double mean = s / count;
            double var = ss / count - mean * mean;
            if (var < 0.0) var = 0.0;
            const double inv_std = 1.0 / std::sqrt(var + eps);
            scale[c] = static_cast<float>(gp[c] * inv_std);
            shift[c] = static_cast<float>(bp[c] - mean * gp[c] * inv_std);
            const double unbiased = var * count / (count - 1);
            rm[c] = static_cast<float>((1.0 - momentum) * rm[c] + momentum * mean);
            rv[c] = static_cast<float>((1.0 - momentum) * rv[c] + momentum * unbiased);
        }
    } else {
        auto rm = running_mean.contiguous();
        auto rv = running_var.contiguous();
        const float* rmp = rm.data_ptr<float>();
        const float* rvp = rv.data_ptr<float>();
        for (int64_t c = 0; c < C; ++c) {
            const double inv_std = 1.0 / std::sqrt((double)rvp[c] + eps);
            scale[c] = static_cast<float>(gp[c] * inv_std);
            shift[c] = static_cast<float>(bp[c] - rmp[c] * gp[c] * inv_std);
        }
    }
    return coeffs;
}

// out = relu(x * scale[c] + shift[c])
torch::Tensor bn_relu(torch::Tensor x, torch::Tensor coeffs) {
    x = x.contiguous();
    const int64_t N = x.size(0), C = x.size(1), HW = x.size(2) * x.size(3);
    auto out = torch::empty_like(x);
    const float* xp = x.data_ptr<float>();
    float* op = out.data_ptr<float>();
    const float* sc = coeffs.data_ptr<float>();
    const float* sh = sc + C;
    #pragma omp parallel for
    for (int64_t nc = 0; nc < N * C; ++nc) {
        const int64_t c = nc % C;
        const float a = sc[c], bb = sh[c];
        const float* src = xp + nc * HW;
        float* dst = op + nc * HW;
        #pragma omp simd
        for (int64_t i = 0; i < HW; ++i) {
            const float v = src[i] * a + bb;
            dst[i] = v > 0.f ? v : 0.f;
        }
    }
    return out;
}

// out = relu(bn2(x) + bn_ds(r))
torch::Tensor bn_add_bn_relu(torch::Tensor x, torch::Tensor cx, torch::Tensor r, torch::Tensor cr) {
    TORCH_CHECK(x.sizes() == r.sizes(), "residual shape mismatch");
    x = x.contiguous();
    r = r.contiguous();
    const int64_t N = x.size(0), C = x.size(1), HW = x.size(2) * x.size(3);
    auto out = torch::empty_like(x);
    const float* xp = x.data_ptr<float>();
    const float* rp = r.data_ptr<float>();
    float* op = out.data_ptr<float>();
    const float* sx = cx.data_ptr<float>();
    const float* hx = sx + C;
    const float* sr = cr.data_ptr<float>();
    const float* hr = sr + C;
    #pragma omp parallel for
    for (int64_t nc = 0; nc < N * C; ++nc) {
        const int64_t c = nc % C;
        const float a = sx[c], ab = hx[c], b = sr[c], bb = hr[c];
        const float* s1 = xp + nc * HW;
        const float* s2 = rp + nc * HW;
        float* dst = op + nc * HW;
        #pragma omp simd
        for (int64_t i = 0; i < HW; ++i) {
            const float v = (s1[i] * a + ab) + (s2[i] * b + bb);
            dst[i] = v > 0.f ? v : 0.f;
        }
    }
    return out;
}
"""

bn_ext = load_inline(
    name="kb_l3_008_resnet_basic_block__bn_fused",
    cpp_sources=bn_cpp_source,
    functions=["bn_coeffs", "bn_relu", "bn_add_bn_relu"],
    extra_cflags=["-O3", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    verbose=False,
)


def _bn_coeffs(bn: nn.BatchNorm2d, x: torch.Tensor, training: bool) -> torch.Tensor:
    use_batch_stats = training or not bn.track_running_stats or bn.running_mean is None
    momentum = 0.0
    if use_batch_stats and bn.track_running_stats and bn.running_mean is not None:
        bn.num_batches_tracked.add_(1)
        momentum = (1.0 / float(bn.num_batches_tracked)) if bn.momentum is None else bn.momentum
    if use_batch_stats and (bn.running_mean is None or not bn.track_running_stats):
        # batch statistics without running buffers: use scratch buffers
        rm = torch.zeros(x.size(1), dtype=x.dtype)
        rv = torch.ones(x.size(1), dtype=x.dtype)
    else:
        rm, rv = bn.running_mean, bn.running_var
    gamma = bn.weight if bn.weight is not None else torch.ones(x.size(1), dtype=x.dtype)
    beta = bn.bias if bn.bias is not None else torch.zeros(x.size(1), dtype=x.dtype)
    return bn_ext.bn_coeffs(x, gamma.detach(), beta.detach(), rm, rv, use_batch_stats, momentum, bn.eps)


class ModelNew(nn.Module):
    """ResNet basic block: PyTorch convolutions, custom fused BatchNorm(+add)+ReLU kernels."""

    expansion = 1

    def __init__(self, in_channels: int, out_channels: int, stride: int = 1):
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

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            ds_conv, ds_bn = self.downsample[0], self.downsample[1]
            r = ds_conv(x)
            cr = _bn_coeffs(ds_bn, r, self.training)

            y = self.conv1(x)
            c1 = _bn_coeffs(self.bn1, y, self.training)
            y = bn_ext.bn_relu(y, c1)

            y = self.conv2(y)
            c2 = _bn_coeffs(self.bn2, y, self.training)
            return bn_ext.bn_add_bn_relu(y, c2, r, cr)
