# corpus: problem=kb_l1_033_batchnorm device=cpu expect=accepted policy=both
# style: super(ModelNew, self).__init__(), repeated get_inputs, c10::optional running stats, num_batches_tracked.add_(1) in forward
# class: 3, 7
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

batch_size = 16
features = 64
dim1 = 33
dim2 = 33

bn_cpp = r"""
#include <torch/extension.h>
#include <cmath>
#include <vector>

// Batch norm over the channel dim of an NCHW (or NC...) tensor.
// In training mode the batch statistics are used and, if given, the running
// buffers are updated in place (unbiased variance, as PyTorch does).
torch::Tensor batch_norm_forward(torch::Tensor x,
                                 c10::optional<torch::Tensor> weight,
                                 c10::optional<torch::Tensor> bias,
                                 c10::optional<torch::Tensor> running_mean,
                                 c10::optional<torch::Tensor> running_var,
                                 bool training,
                                 double momentum,
                                 double eps) {
    TORCH_CHECK(x.dim() >= 2, "batch_norm_forward: expected at least 2 dims");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "batch_norm_forward: float32 only");
    x = x.contiguous();
    const int64_t N = x.size(0);
    const int64_t C = x.size(1);
    const int64_t HW = x.numel() / (N * C);
    const int64_t count = N * HW;

    auto out = torch::empty_like(x);
    const float* xp = x.data_ptr<float>();
    float* op = out.data_ptr<float>();

    torch::Tensor w, b, rm, rv;
    const float* wp = nullptr;
    const float* bp = nullptr;
    float* rmp = nullptr;
    float* rvp = nullptr;
    if (weight.has_value() && weight->defined()) { w = weight->contiguous(); wp = w.data_ptr<float>(); }
    if (bias.has_value() && bias->defined()) { b = bias->contiguous(); bp = b.data_ptr<float>(); }
    if (running_mean.has_value() && running_mean->defined()) {
        TORCH_CHECK(running_mean->is_contiguous(), "running_mean must be contiguous");
        rm = *running_mean; rmp = rm.data_ptr<float>();
    }
    if (running_var.has_value() && running_var->defined()) {
        TORCH_CHECK(running_var->is_contiguous(), "running_var must be contiguous");
        rv = *running_var; rvp = rv.data_ptr<float>();
    }
    const bool use_batch_stats = training || rmp == nullptr || rvp == nullptr;
    TORCH_CHECK(!use_batch_stats || count > 1 || !training,
                "Expected more than 1 value per channel when training");

    #pragma omp parallel for schedule(static)
    for (int64_t c = 0; c < C; ++c) {
        double mean, var;
        if (use_batch_stats) {
            double s = 0.0;
            for (int64_t n = 0; n < N; ++n) {
                const float* p = xp + (n * C + c) * HW;
                for (int64_t i = 0; i < HW; ++i) s += p[i];
            }
            mean = s / count;
            double sq = 0.0;
            for (int64_t n = 0; n < N; ++n) {
                const float* p = xp + (n * C + c) * HW;
                for (int64_t i = 0; i < HW; ++i) { const double d = p[i] - mean; sq += d * d; }
            }
            var = sq / count;  // biased, used for normalization
            if (training && rmp != nullptr && rvp != nullptr) {
                const double unbiased = count > 1 ? sq / (count - 1) : sq;
                rmp[c] = static_cast<float>((1.0 - momentum) * rmp[c] + momentum * mean);
                rvp[c] = static_cast<float>((1.0 - momentum) * rvp[c] + momentum * unbiased);
            }
        } else {
            mean = rmp[c];
            var = rvp[c];
        }
        const float inv_std = static_cast<float>(1.0 / std::sqrt(var + eps));
        const float g = wp ? wp[c] : 1.f;
        const float beta = bp ? bp[c] : 0.f;
        const float scale = g * inv_std;
        const float shift = beta - static_cast<float>(mean) * scale;
        for (int64_t n = 0; n < N; ++n) {
            const float* p = xp + (n * C + c) * HW;
            float* q = op + (n * C + c) * HW;
            for (int64_t i = 0; i < HW; ++i) q[i] = p[i] * scale + shift;
        }
    }
    return out;
}
"""

bn_ext = load_inline(
    name="kb_l1_033_batchnorm__optional_args",
    cpp_sources=bn_cpp,
    functions=["batch_norm_forward"],
    extra_cflags=["-O3", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    verbose=False,
)


class ModelNew(nn.Module):
    """BatchNorm2d with a custom C++ forward (batch stats in training, running stats in eval)."""

    def __init__(self, num_features: int):
        super(ModelNew, self).__init__()
        self.bn = nn.BatchNorm2d(num_features=num_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        bn = self.bn
        training = bn.training or not bn.track_running_stats
        momentum = bn.momentum if bn.momentum is not None else 0.0
        if bn.training and bn.track_running_stats:
            bn.num_batches_tracked.add_(1)
            if bn.momentum is None:  # cumulative moving average
                momentum = 1.0 / float(bn.num_batches_tracked.item())
        update = bn.training and bn.track_running_stats
        return bn_ext.batch_norm_forward(
            x.float(),
            bn.weight,
            bn.bias,
            bn.running_mean if (update or not training) else None,
            bn.running_var if (update or not training) else None,
            training,
            float(momentum),
            float(bn.eps),
        )


def get_inputs():
    return [torch.randn(batch_size, features, dim1, dim2)]


def get_init_inputs():
    return [features]
