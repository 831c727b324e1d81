# corpus: problem=kb_l1_095_cross_entropy device=cpu expect=accepted policy=both
# style: hand-written PYBIND11_MODULE with py::arg keywords and a default, called with keyword arguments; OpenMP reduction(+) in double with num_threads from a functools.lru_cache helper; at::scalar_tensor result; @torch.no_grad() (blind round 13)
# class: 7
import functools
import os

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
#include <torch/extension.h>
#include <ATen/ATen.h>
#include <omp.h>
#include <algorithm>
#include <cmath>
#include <vector>

// Mean cross entropy over rows: loss_i = logsumexp(x_i) - x_i[t_i].
// Rows are split across OpenMP threads; each row is a numerically stable
// max / sum-exp pass, the per-row losses are summed in double.
at::Tensor cross_entropy_mean(const at::Tensor& logits,
                              const at::Tensor& targets,
                              int64_t num_threads) {
    TORCH_CHECK(!logits.is_cuda(), "cross_entropy_mean: CPU only");
    TORCH_CHECK(logits.dim() == 2, "logits must be [batch, classes]");
    TORCH_CHECK(targets.dim() == 1 && targets.size(0) == logits.size(0),
                "targets must be [batch]");
    TORCH_CHECK(logits.scalar_type() == at::kFloat, "logits must be float32");
    TORCH_CHECK(targets.scalar_type() == at::kLong, "targets must be int64");

    at::Tensor x = logits.contiguous();
    at::Tensor t = targets.contiguous();
    const int64_t B = x.size(0);
    const int64_t C = x.size(1);
    const float* xp = x.data_ptr<float>();
    const int64_t* tp = t.data_ptr<int64_t>();

    double total = 0.0;
    #pragma omp parallel for reduction(+:total) schedule(static) num_threads(num_threads)
    for (int64_t i = 0; i < B; ++i) {
        const float* row = xp + i * C;
        float mx = row[0];
        for (int64_t j = 1; j < C; ++j) mx = std::max(mx, row[j]);
        double s = 0.0;
        for (int64_t j = 0; j < C; ++j) s += std::exp(static_cast<double>(row[j] - mx));
        const int64_t tgt = tp[i];
        total += (std::log(s) + static_cast<double>(mx)) - static_cast<double>(row[tgt]);
    }
    return at::scalar_tensor(static_cast<float>(total / static_cast<double>(B)),
                             x.options());
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("cross_entropy_mean", &cross_entropy_mean,
          "Mean cross-entropy loss (CPU, OpenMP)",
          py::arg("logits"), py::arg("targets"), py::arg("num_threads") = 1);
}
"""

ce_ext = load_inline(
    name="kb_l1_095_cross_entropy__pybind_pyarg_attensor_omp_lrucache",
    cpp_sources=cpp_source,
    extra_cflags=["-O3", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    with_cuda=False,
    verbose=False,
)


@functools.lru_cache(maxsize=None)
def _thread_count() -> int:
    return max(1, min(torch.get_num_threads(), os.cpu_count() or 1))


class ModelNew(nn.Module):
    """Cross entropy (mean reduction) with a fused C++ log-softmax + NLL kernel."""

    def __init__(self):
        super(ModelNew, self).__init__()

    @torch.no_grad()
    def forward(self, predictions, targets):
        return ce_ext.cross_entropy_mean(
            logits=predictions, targets=targets, num_threads=_thread_count()
        )


batch_size = 32768
num_classes = 4096
input_shape = (num_classes,)
dim = 1


def get_inputs():
    return [torch.rand(batch_size, *input_shape), torch.randint(0, num_classes, (batch_size,))]


def get_init_inputs():
    return []
