# corpus: problem=kb_l1_036_rmsnorm device=cpu expect=accepted policy=both
# style: global _ext filled on first use, pybind keyword/default arguments (py::none()), c10::optional
# class: 1, 7
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

rmsnorm_cpp = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <cmath>
#include <vector>

namespace py = pybind11;

// RMS norm over dim 1 of an (N, C, *) tensor.
// y[n, c, s] = x[n, c, s] / sqrt(mean_c(x[n, :, s]^2) + eps) (* weight[c] if given)
torch::Tensor rms_norm_channels(torch::Tensor x,
                                double eps,
                                c10::optional<torch::Tensor> weight) {
    TORCH_CHECK(x.device().is_cpu(), "rms_norm_channels: CPU tensor expected");
    TORCH_CHECK(x.scalar_type() == at::kFloat, "rms_norm_channels: float32 expected");
    TORCH_CHECK(x.dim() >= 2, "rms_norm_channels: need at least 2 dims (N, C, ...)");
    x = x.contiguous();

    const int64_t N = x.size(0);
    const int64_t C = x.size(1);
    const int64_t S = C == 0 || N == 0 ? 0 : x.numel() / (N * C);

    const float* w = nullptr;
    torch::Tensor wc;
    if (weight.has_value() && weight->defined()) {
        wc = weight->contiguous();
        TORCH_CHECK(wc.scalar_type() == at::kFloat && wc.numel() == C,
                    "rms_norm_channels: weight must be float32 with C elements");
        w = wc.data_ptr<float>();
    }

    auto y = torch::empty_like(x);
    if (x.numel() == 0) return y;
    const float* xp = x.data_ptr<float>();
    float* yp = y.data_ptr<float>();
    const float feps = static_cast<float>(eps);

    at::parallel_for(0, N, 1, [&](int64_t nb, int64_t ne) {
        std::vector<float> acc(S);
        for (int64_t n = nb; n < ne; ++n) {
            const float* xn = xp + n * C * S;
            float* yn = yp + n * C * S;
            std::fill(acc.begin(), acc.end(), 0.0f);
            for (int64_t c = 0; c < C; ++c) {
                const float* row = xn + c * S;
                for (int64_t s = 0; s < S; ++s) acc[s] += row[s] * row[s];
            }
            for (int64_t s = 0; s < S; ++s)
                acc[s] = std::sqrt(acc[s] / static_cast<float>(C) + feps);
            for (int64_t c = 0; c < C; ++c) {
                const float* row = xn + c * S;
                float* out = yn + c * S;
                const float g = w ? w[c] : 1.0f;
                for (int64_t s = 0; s < S; ++s) out[s] = row[s] / acc[s] * g;
            }
        }
    });
    return y;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("rms_norm_channels", &rms_norm_channels,
          "RMS normalization over dim 1",
          py::arg("x"),
          py::arg("eps") = 1e-5,
          py::arg("weight") = py::none());
}
"""

_ext = None


def _load_ext():
    global _ext
    if _ext is None:
        _ext = load_inline(
            name="kb_l1_036_rmsnorm__pybind_kwargs_global",
            cpp_sources=[rmsnorm_cpp],
            extra_cflags=["-O3"],
            verbose=False,
        )
    return _ext


class ModelNew(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-5):
        super(ModelNew, self).__init__()
        self.num_features = num_features
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ext = _load_ext()
        return ext.rms_norm_channels(x, eps=self.eps)
