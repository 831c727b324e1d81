# corpus: problem=kb_l1_033_batchnorm device=cpu expect=accepted policy=kernelbench
# style: the candidate's own BatchNorm module (Parameters and running buffers registered by hand) calling the extension; ATen statistics in host code
# class: 3, 2
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <cmath>

// Batch normalization of an NCHW float tensor. The statistics come from ATen (batch statistics while training,
// with the running statistics updated in place; the running statistics in eval); the normalization itself is a
// loop over the (n, c) planes.
torch::Tensor batch_norm_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias,
                                 torch::Tensor running_mean, torch::Tensor running_var,
                                 bool training, double momentum, double eps) {
    TORCH_CHECK(x.dim() == 4, "batch_norm_forward: NCHW input expected, got ", x.dim(), " dims");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "batch_norm_forward: float32 only");
    auto xc = x.contiguous();
    const int64_t N = xc.size(0);
    const int64_t C = xc.size(1);
    const int64_t HW = xc.size(2) * xc.size(3);
    TORCH_CHECK(weight.numel() == C && bias.numel() == C, "batch_norm_forward: affine parameters must have C entries");

    torch::Tensor mean;
    torch::Tensor var;
    if (training) {
        mean = xc.mean({0, 2, 3});
        var = (xc - mean.view({1, C, 1, 1})).pow(2).mean({0, 2, 3});
        const int64_t count = N * HW;
        auto unbiased = var * (static_cast<double>(count) / static_cast<double>(count - 1));
        running_mean.mul_(1.0 - momentum).add_(mean, momentum);
        running_var.mul_(1.0 - momentum).add_(unbiased, momentum);
    } else {
        mean = running_mean;
        var = running_var;
    }
    auto scale = (weight / torch::sqrt(var + eps)).contiguous();
    auto shift = (bias - mean * scale).contiguous();

    auto y = torch::empty_like(xc);
    const float* px = xc.data_ptr<float>();
    const float* ps = scale.data_ptr<float>();
    const float* pt = shift.data_ptr<float>();
    float* py = y.data_ptr<float>();
    at::parallel_for(0, N * C, 1, [&](int64_t p0, int64_t p1) {
        for (int64_t plane = p0; plane < p1; ++plane) {
            const int64_t c = plane % C;
            const float s = ps[c], t = pt[c];
            const float* src = px + plane * HW;
            float* dst = py + plane * HW;
            for (int64_t i = 0; i < HW; ++i) dst[i] = src[i] * s + t;
        }
    });
    return y;
}
"""

batchnorm_cpp = load_inline(
    name="corpus_batchnorm2d_cpu",
    cpp_sources=cpp_source,
    functions=["batch_norm_forward"],
    extra_cflags=["-O3"],
)


class CustomBatchNorm2d(nn.Module):
    def __init__(self, num_features, eps=1e-5, momentum=0.1):
        super().__init__()
        self.eps = eps
        self.momentum = momentum
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))

    def forward(self, x):
        return batchnorm_cpp.batch_norm_forward(x, self.weight, self.bias, self.running_mean, self.running_var,
                                                self.training, self.momentum, self.eps)


class ModelNew(nn.Module):
    def __init__(self, num_features):
        super().__init__()
        self.bn = CustomBatchNorm2d(num_features)

    def forward(self, x):
        return self.bn(x)
