# corpus: problem=kb_l1_033_batchnorm device=cpu expect=accepted policy=kernelbench
# style: the kernel returns the output with the batch mean and variance; PyTorch updates the running statistics
# class: 3
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_cpp_src = r"""
#include <torch/extension.h>
#include <vector>
#include <cmath>

// Returns {y, mean, biased_var}. In training mode the statistics come from the batch;
// otherwise the supplied running statistics are used (and returned unchanged).
std::vector<torch::Tensor> bn2d_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias,
                                        torch::Tensor running_mean, torch::Tensor running_var,
                                        bool training, double eps) {
    TORCH_CHECK(x.dim() == 4, "expected NCHW input");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "float32 only");
    auto xc = x.contiguous();
    const int64_t N = xc.size(0), C = xc.size(1), HW = xc.size(2) * xc.size(3);
    auto y = torch::empty_like(xc);
    auto mean = torch::empty({C}, xc.options());
    auto var = torch::empty({C}, xc.options());
    const float* px = xc.data_ptr<float>();
    float* py = y.data_ptr<float>();
    float* pm = mean.data_ptr<float>();
    float* pv = var.data_ptr<float>();
    auto w = weight.contiguous(); auto b = bias.contiguous();
    const float* pw = w.data_ptr<float>();
    const float* pb = b.data_ptr<float>();
    torch::Tensor rm, rv;
    if (!training) { rm = running_mean.contiguous(); rv = running_var.contiguous(); }

    #pragma omp parallel for schedule(static)
    for (int64_t c = 0; c < C; ++c) {
        double m, v;
        if (training) {
            double s = 0.0;
            for (int64_t n = 0; n < N; ++n) {
                const float* p = px + (n * C + c) * HW;
                for (int64_t i = 0; i < HW; ++i) s += p[i];
            }
            const double cnt = double(N * HW);
            m = s / cnt;
            double sq = 0.0;
            for (int64_t n = 0; n < N; ++n) {
                const float* p = px + (n * C + c) * HW;
                for (int64_t i = 0; i < HW; ++i) { double d = p[i] - m; sq += d * d; }
            }
            v = sq / cnt;
        } else {
            m = rm.data_ptr<float>()[c];
            v = rv.data_ptr<float>()[c];
        }
        pm[c] = float(m); pv[c] = float(v);
        const float scale = float(pw[c] / std::sqrt(v + eps));
        const float shift = float(pb[c] - m * scale);
        for (int64_t n = 0; n < N; ++n) {
            const float* p = px + (n * C + c) * HW;
            float* q = py + (n * C + c) * HW;
            for (int64_t i = 0; i < HW; ++i) q[i] = p[i] * scale + shift;
        }
    }
    return {y, mean, var};
}
"""

bn_ext = load_inline(
    name="kb_l1_033_batchnorm__multi_return",
    cpp_sources=_cpp_src,
    functions=["bn2d_forward"],
    extra_cflags=["-O3", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, num_features: int):
        super().__init__()
        # keep the reference's module for its affine parameters and running buffers
        self.bn = nn.BatchNorm2d(num_features=num_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        bn = self.bn
        use_batch_stats = bn.training or bn.running_mean is None
        y, mean, var = bn_ext.bn2d_forward(
            x, bn.weight, bn.bias,
            bn.running_mean if bn.running_mean is not None else torch.empty(0),
            bn.running_var if bn.running_var is not None else torch.empty(0),
            use_batch_stats, bn.eps,
        )
        if bn.training and bn.track_running_stats:
            # running-stat bookkeeping stays in PyTorch, as nn.BatchNorm2d does it
            with torch.no_grad():
                bn.num_batches_tracked += 1
                if bn.momentum is None:
                    mom = 1.0 / float(bn.num_batches_tracked)
                else:
                    mom = bn.momentum
                n = x.numel() // x.size(1)
                unbiased = var * (n / max(n - 1, 1))
                bn.running_mean.mul_(1 - mom).add_(mean, alpha=mom)
                bn.running_var.mul_(1 - mom).add_(unbiased, alpha=mom)
        return y
