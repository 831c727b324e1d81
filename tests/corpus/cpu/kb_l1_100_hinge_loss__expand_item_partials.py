# corpus: problem=kb_l1_100_hinge_loss device=cpu expect=accepted policy=both
# style: lazy _ext = None loader; unsqueeze(0).expand() read through accessors; numel as torch.tensor(shape).prod().item(); chunk + list comprehension + cat; a second kernel for the mean
# class: 1
# As written blind it broadcast the targets over rows (unsqueeze(1)): a wrong answer whose mean differs by ~2e-4,
# which the author's own check at 1e-3 missed and the verifier rejected (output_mismatch); corrected here.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

batch_size = 32768
input_shape = (32768,)
dim = 1

_ext = None


def _get_ext():
    global _ext
    if _ext is None:
        src = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <algorithm>

// Per-row sums of clamp(1 - p * t, 0); t may be an expanded (stride-0) view.
torch::Tensor hinge_row_sums(torch::Tensor pred, torch::Tensor targ) {
    TORCH_CHECK(pred.dim() == 2 && targ.dim() == 2, "hinge_row_sums: 2-D inputs");
    TORCH_CHECK(pred.sizes() == targ.sizes(), "hinge_row_sums: sizes differ");
    TORCH_CHECK(pred.scalar_type() == at::kFloat && targ.scalar_type() == at::kFloat, "float32 only");
    const int64_t R = pred.size(0), N = pred.size(1);
    auto out = torch::empty({R}, pred.options().dtype(at::kDouble));
    auto pa = pred.accessor<float, 2>();
    auto ta = targ.accessor<float, 2>();
    auto oa = out.accessor<double, 1>();
    at::parallel_for(0, R, 1, [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
            double s = 0.0;
            for (int64_t j = 0; j < N; ++j) {
                float v = 1.0f - pa[r][j] * ta[r][j];
                s += (double)std::max(v, 0.0f);
            }
            oa[r] = s;
        }
    });
    return out;
}

// Sum the partial sums and divide by the element count.
torch::Tensor finalize_mean(torch::Tensor partials, int64_t count) {
    TORCH_CHECK(partials.scalar_type() == at::kDouble, "finalize_mean: double partials");
    auto p = partials.contiguous();
    const double* d = p.data_ptr<double>();
    double s = 0.0;
    for (int64_t i = 0; i < p.numel(); ++i) s += d[i];
    auto out = torch::empty({}, p.options().dtype(at::kFloat));
    out.data_ptr<float>()[0] = (float)(s / (double)count);
    return out;
}
"""
        _ext = load_inline(
            name="kb_hinge_loss_partials",
            cpp_sources=src,
            functions=["hinge_row_sums", "finalize_mean"],
            extra_cflags=["-O3"],
            verbose=False,
        )
    return _ext


class ModelNew(nn.Module):
    def __init__(self, chunks: int = 8):
        super().__init__()
        self.chunks = chunks

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        ext = _get_ext()
        pred2d = predictions.flatten(1)
        # (batch,) targets broadcast over the last dim without materialising them
        t2d = targets.unsqueeze(0).expand(pred2d.shape[0], -1)
        numel = torch.tensor(pred2d.shape).prod().item()
        partials = [ext.hinge_row_sums(p, t)
                    for p, t in zip(pred2d.chunk(self.chunks, dim=0), t2d.chunk(self.chunks, dim=0))]
        return ext.finalize_mean(torch.cat(partials), numel)


def get_inputs():
    from torch.distributions import Pareto
    predictions = Pareto(0.01, 1.5).sample((batch_size, *input_shape))
    targets = torch.randint(0, 2, (batch_size,)).float() * 2 - 1
    return [predictions, targets]


def get_init_inputs():
    return []
