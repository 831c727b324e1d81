# corpus: problem=kb_l1_094_mse_loss device=cpu expect=accepted policy=both
# style: OpenMP reduction in double into a 0-d result tensor; TORCH_CHECK on matching sizes
# class: 7
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

mse_source = """
#include <torch/extension.h>

torch::Tensor mse_loss_cpu(torch::Tensor predictions, torch::Tensor targets) {
    TORCH_CHECK(predictions.sizes() == targets.sizes(),
                "mse_loss_cpu: predictions and targets must have the same shape");
    TORCH_CHECK(predictions.scalar_type() == torch::kFloat32 &&
                targets.scalar_type() == torch::kFloat32,
                "mse_loss_cpu: float32 inputs expected");

    auto p = predictions.contiguous();
    auto t = targets.contiguous();
    const float* pp = p.data_ptr<float>();
    const float* tp = t.data_ptr<float>();
    const int64_t n = p.numel();

    double sum = 0.0;
    #pragma omp parallel for reduction(+:sum) schedule(static)
    for (int64_t i = 0; i < n; ++i) {
        const double d = static_cast<double>(pp[i]) - static_cast<double>(tp[i]);
        sum += d * d;
    }

    auto out = torch::empty({}, p.options());
    out.data_ptr<float>()[0] = static_cast<float>(sum / static_cast<double>(n));
    return out;
}
"""

mse_ext = load_inline(
    name="kb_l1_094_mse_loss__omp_reduce",
    cpp_sources=[mse_source],
    functions=["mse_loss_cpu"],
    extra_cflags=["-O3", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return mse_ext.mse_loss_cpu(predictions, targets)
