# corpus: problem=kb_l1_100_hinge_loss device=cpu expect=accepted policy=both
# style: at::infer_size broadcast of targets against predictions, strided reads, at::parallel_for partial sums
# class: 3, 7
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

hinge_cpp = r"""
#include <torch/extension.h>
#include <ATen/ExpandUtils.h>
#include <ATen/Parallel.h>
#include <algorithm>
#include <limits>
#include <vector>

// mean(clamp(1 - p * t, min=0)) with full PyTorch broadcasting between p and t.
torch::Tensor hinge_loss_mean(torch::Tensor predictions, torch::Tensor targets) {
    TORCH_CHECK(predictions.scalar_type() == torch::kFloat && targets.scalar_type() == torch::kFloat,
                "hinge_loss_mean: float32 inputs expected");
    // Same broadcasting rule (and same error for incompatible shapes) as `predictions * targets`.
    std::vector<int64_t> shape = at::infer_size(predictions.sizes(), targets.sizes());
    auto p = predictions.expand(shape);   // views only, stride 0 on broadcast dims
    auto t = targets.expand(shape);

    const int64_t nd = static_cast<int64_t>(shape.size());
    int64_t numel = 1;
    for (auto s : shape) numel *= s;
    auto out = torch::empty({}, predictions.options());
    if (numel == 0) {
        out.fill_(std::numeric_limits<float>::quiet_NaN());
        return out;
    }

    const float* pp = p.data_ptr<float>();
    const float* tp = t.data_ptr<float>();
    const int64_t last = nd > 0 ? shape[nd - 1] : 1;
    const int64_t ps_last = nd > 0 ? p.stride(nd - 1) : 0;
    const int64_t ts_last = nd > 0 ? t.stride(nd - 1) : 0;
    const int64_t rows = numel / last;
    std::vector<int64_t> psz(shape.begin(), shape.end());
    std::vector<int64_t> pst(p.strides().begin(), p.strides().end());
    std::vector<int64_t> tst(t.strides().begin(), t.strides().end());

    const int nthreads = at::get_num_threads();
    std::vector<double> partial(std::max(nthreads, 1) * 8, 0.0);

    at::parallel_for(0, rows, 1, [&](int64_t begin, int64_t end) {
        double local = 0.0;
        for (int64_t r = begin; r < end; ++r) {
            // offset of this row in each (possibly broadcast) input
            int64_t rem = r, poff = 0, toff = 0;
            for (int64_t d = nd - 2; d >= 0; --d) {
                const int64_t idx = rem % psz[d];
                rem /= psz[d];
                poff += idx * pst[d];
                toff += idx * tst[d];
            }
            const float* prow = pp + poff;
            const float* trow = tp + toff;
            double row_sum = 0.0;
            for (int64_t k = 0; k < last; ++k) {
                const float v = 1.0f - prow[k * ps_last] * trow[k * ts_last];
                row_sum += v < 0.0f ? 0.0f : v;  // keeps NaN like torch.clamp
            }
            local += row_sum;
        }
        partial[at::get_thread_num() * 8] += local;
    });

    double total = 0.0;
    for (size_t i = 0; i < partial.size(); i += 8) total += partial[i];
    out.fill_(static_cast<float>(total / static_cast<double>(numel)));
    return out;
}
"""

hinge_ext = load_inline(
    name="kb_l1_100_hinge_loss__broadcast_strided",
    cpp_sources=hinge_cpp,
    functions=["hinge_loss_mean"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return hinge_ext.hinge_loss_mean(predictions, targets)
