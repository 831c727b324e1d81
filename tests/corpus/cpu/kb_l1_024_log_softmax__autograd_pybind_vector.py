# corpus: problem=kb_l1_024_log_softmax device=cpu expect=accepted policy=both
# style: torch.autograd.Function forward(ctx, x, dim) with an int dim from apply, `dim != x.dim() - 1` int comparison, movedim, pybind11 vector<Tensor> return (out, lse), -fopenmp (blind round 10; strict static_reject before the apply-argument fix)
# class: 3
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

batch_size = 4096
dim = 393216

log_softmax_cpp = r"""
#include <torch/extension.h>
#include <cmath>
#include <limits>
#include <vector>

// One row per iteration; rows are spread across OpenMP threads.
// Forward returns {output, row_logsumexp}; the second tensor is saved for
// backward (and is handy for debugging).
template <typename scalar_t>
static void log_softmax_rows(const scalar_t* __restrict__ x,
                             scalar_t* __restrict__ y,
                             scalar_t* __restrict__ lse,
                             int64_t rows, int64_t cols) {
    #pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
        const scalar_t* xr = x + r * cols;
        scalar_t* yr = y + r * cols;

        scalar_t mx = -std::numeric_limits<scalar_t>::infinity();
        for (int64_t c = 0; c < cols; ++c) mx = xr[c] > mx ? xr[c] : mx;

        double sum = 0.0;
        for (int64_t c = 0; c < cols; ++c) sum += std::exp(static_cast<double>(xr[c] - mx));

        const double log_norm = static_cast<double>(mx) + std::log(sum);
        const scalar_t ln = static_cast<scalar_t>(log_norm);
        for (int64_t c = 0; c < cols; ++c)
            yr[c] = static_cast<scalar_t>(static_cast<double>(xr[c]) - log_norm);
        lse[r] = ln;
    }
}

// d x = d y - exp(y) * sum(d y)
template <typename scalar_t>
static void log_softmax_backward_rows(const scalar_t* __restrict__ gy,
                                      const scalar_t* __restrict__ y,
                                      scalar_t* __restrict__ gx,
                                      int64_t rows, int64_t cols) {
    #pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
        const scalar_t* gyr = gy + r * cols;
        const scalar_t* yr = y + r * cols;
        scalar_t* gxr = gx + r * cols;
        double s = 0.0;
        for (int64_t c = 0; c < cols; ++c) s += gyr[c];
        const scalar_t ss = static_cast<scalar_t>(s);
        for (int64_t c = 0; c < cols; ++c) gxr[c] = gyr[c] - std::exp(yr[c]) * ss;
    }
}

std::vector<torch::Tensor> log_softmax_forward(torch::Tensor x) {
    TORCH_CHECK(x.device().is_cpu(), "log_softmax_forward: CPU tensor expected");
    TORCH_CHECK(x.dim() >= 1, "log_softmax_forward: need at least 1 dim");
    auto xc = x.contiguous();
    const int64_t cols = xc.size(-1);
    const int64_t rows = cols == 0 ? 0 : xc.numel() / cols;
    auto y = torch::empty_like(xc);
    auto lse_sizes = xc.sizes().vec();
    lse_sizes.back() = 1;
    auto lse = torch::empty(lse_sizes, xc.options());
    AT_DISPATCH_FLOATING_TYPES(xc.scalar_type(), "log_softmax_forward", [&] {
        log_softmax_rows<scalar_t>(xc.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(),
                                   lse.data_ptr<scalar_t>(), rows, cols);
    });
    return {y, lse};
}

torch::Tensor log_softmax_backward(torch::Tensor grad_out, torch::Tensor out) {
    TORCH_CHECK(grad_out.sizes() == out.sizes(), "log_softmax_backward: shape mismatch");
    auto g = grad_out.contiguous();
    auto y = out.contiguous();
    const int64_t cols = y.size(-1);
    const int64_t rows = cols == 0 ? 0 : y.numel() / cols;
    auto gx = torch::empty_like(y);
    AT_DISPATCH_FLOATING_TYPES(y.scalar_type(), "log_softmax_backward", [&] {
        log_softmax_backward_rows<scalar_t>(g.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(),
                                            gx.data_ptr<scalar_t>(), rows, cols);
    });
    return gx;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("forward", &log_softmax_forward, "row-wise log_softmax (returns [out, logsumexp])");
    m.def("backward", &log_softmax_backward, "log_softmax backward");
}
"""

log_softmax_ext = load_inline(
    name="kb_log_softmax_autograd",
    cpp_sources=[log_softmax_cpp],
    extra_cflags=["-O3", "-march=native", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    verbose=False,
)


class LogSoftmaxFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, dim):
        # kernel reduces over the last dim; move the requested one there
        moved = dim != x.dim() - 1
        xin = x.movedim(dim, -1) if moved else x
        out, _lse = log_softmax_ext.forward(xin)
        ctx.save_for_backward(out)
        ctx.dim = dim
        ctx.moved = moved
        return out.movedim(-1, dim) if moved else out

    @staticmethod
    def backward(ctx, grad_output):
        (out,) = ctx.saved_tensors
        g = grad_output.movedim(ctx.dim, -1) if ctx.moved else grad_output
        gx = log_softmax_ext.backward(g, out)
        if ctx.moved:
            gx = gx.movedim(-1, ctx.dim)
        return gx, None


class ModelNew(nn.Module):
    def __init__(self, dim: int = 1):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        d = self.dim if self.dim >= 0 else self.dim + x.dim()
        return LogSoftmaxFunction.apply(x, d)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
