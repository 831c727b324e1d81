# corpus: problem=kb_l1_024_log_softmax device=cpu expect=accepted policy=both
# style: hand-written PYBIND11_MODULE with a docstring, at::parallel_for over rows, max-subtracted log-sum-exp
# class: 7
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

log_softmax_source = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <cmath>
#include <limits>

// Log-softmax over the last dimension of a contiguous 2D view (rows x cols).
torch::Tensor log_softmax_lastdim(torch::Tensor x) {
    TORCH_CHECK(x.scalar_type() == at::kFloat, "log_softmax_lastdim: expected float32");
    TORCH_CHECK(x.dim() >= 1, "log_softmax_lastdim: expected at least 1 dim");
    auto input = x.contiguous();
    auto output = torch::empty_like(input);

    const int64_t cols = input.size(-1);
    const int64_t rows = cols == 0 ? 0 : input.numel() / cols;
    const float* src = input.data_ptr<float>();
    float* dst = output.data_ptr<float>();

    at::parallel_for(0, rows, 1, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            const float* row = src + r * cols;
            float* orow = dst + r * cols;

            float mx = -std::numeric_limits<float>::infinity();
            for (int64_t c = 0; c < cols; ++c) {
                mx = std::max(mx, row[c]);
            }
            if (std::isinf(mx) && mx < 0) {
                // all -inf row: torch gives nan for every element
                mx = 0.0f;
            }
            double sum = 0.0;
            for (int64_t c = 0; c < cols; ++c) {
                sum += std::exp(static_cast<double>(row[c] - mx));
            }
            const float lse = mx + static_cast<float>(std::log(sum));
            for (int64_t c = 0; c < cols; ++c) {
                orow[c] = row[c] - lse;
            }
        }
    });
    return output;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("log_softmax_lastdim", &log_softmax_lastdim, "LogSoftmax over the last dim (CPU)");
}
"""

_ext = load_inline(
    name="kb_l1_024_log_softmax__pybind11",
    cpp_sources=[log_softmax_source],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int = 1):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        d = self.dim % x.dim() if x.dim() > 0 else 0
        last = x.dim() - 1
        if x.dim() == 0:
            return _ext.log_softmax_lastdim(x.reshape(1)).reshape(())
        if d == last:
            return _ext.log_softmax_lastdim(x)
        # move the softmax dimension to the end, run the kernel, move it back
        y = _ext.log_softmax_lastdim(x.movedim(d, -1).contiguous())
        return y.movedim(-1, d)
