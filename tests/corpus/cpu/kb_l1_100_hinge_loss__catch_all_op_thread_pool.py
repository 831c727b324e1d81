# corpus: problem=kb_l1_100_hinge_loss device=cpu expect=accepted policy=both
# style: TORCH_LIBRARY m.def(schema, &fn) catch-all op called through torch.ops, is_python_module=False; std::thread pool; broadcast by expand read through strides; verbose=True
# class: 2
import torch
import torch.nn as nn
from torch.distributions import Pareto
from torch.utils.cpp_extension import load_inline

batch_size = 32768
input_shape = (32768,)
dim = 1

hinge_cpp = r"""
#include <torch/extension.h>
#include <torch/library.h>
#include <ATen/ExpandUtils.h>
#include <thread>
#include <vector>
#include <algorithm>

// mean(clamp(1 - pred * target, min=0)) with numpy broadcasting between pred and target.
// Both operands are expanded (views, no copies) to the common shape and read through raw
// pointers and their strides; the last dimension is the inner loop.
at::Tensor hinge_loss_mean(const at::Tensor& pred, const at::Tensor& target) {
    TORCH_CHECK(pred.device().is_cpu() && target.device().is_cpu(), "hinge_loss_mean: CPU tensors only");
    TORCH_CHECK(pred.scalar_type() == at::kFloat && target.scalar_type() == at::kFloat,
                "hinge_loss_mean: float32 tensors only");
    auto shape = at::infer_size(pred.sizes(), target.sizes());
    at::Tensor p = pred.expand(shape);
    at::Tensor t = target.expand(shape);
    const int64_t nd = (int64_t)shape.size();
    int64_t numel = 1;
    for (auto s : shape) numel *= s;
    auto result = at::empty({}, pred.options());
    if (numel == 0) { result.data_ptr<float>()[0] = std::numeric_limits<float>::quiet_NaN(); return result; }

    const int64_t inner = nd ? shape[nd - 1] : 1;
    const int64_t rows = numel / inner;
    const int64_t ps_in = nd ? p.stride(nd - 1) : 0;
    const int64_t ts_in = nd ? t.stride(nd - 1) : 0;
    std::vector<int64_t> sizes(shape.begin(), shape.end());
    std::vector<int64_t> pst(p.strides().begin(), p.strides().end());
    std::vector<int64_t> tst(t.strides().begin(), t.strides().end());
    const float* pp = p.data_ptr<float>();
    const float* tp = t.data_ptr<float>();

    unsigned hw = std::thread::hardware_concurrency();
    int64_t nthreads = std::max<int64_t>(1, std::min<int64_t>(hw ? hw : 1, rows));
    std::vector<double> partial(nthreads, 0.0);

    auto worker = [&](int64_t tid) {
        const int64_t r0 = rows * tid / nthreads;
        const int64_t r1 = rows * (tid + 1) / nthreads;
        double acc = 0.0;
        for (int64_t r = r0; r < r1; ++r) {
            // offsets of row r in the two expanded views
            int64_t rem = r, po = 0, to = 0;
            for (int64_t d = nd - 2; d >= 0; --d) {
                const int64_t idx = rem % sizes[d];
                rem /= sizes[d];
                po += idx * pst[d];
                to += idx * tst[d];
            }
            const float* prow = pp + po;
            const float* trow = tp + to;
            float lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
            int64_t i = 0;
            for (; i + 8 <= inner; i += 8) {
                for (int k = 0; k < 8; ++k) {
                    const float v = 1.0f - prow[(i + k) * ps_in] * trow[(i + k) * ts_in];
                    lane[k] += v > 0.f ? v : 0.f;
                }
            }
            double rowsum = 0.0;
            for (; i < inner; ++i) {
                const float v = 1.0f - prow[i * ps_in] * trow[i * ts_in];
                rowsum += v > 0.f ? v : 0.f;
            }
            for (int k = 0; k < 8; ++k) rowsum += lane[k];
            acc += rowsum;
        }
        partial[tid] = acc;
    };

    std::vector<std::thread> pool;
    for (int64_t tid = 1; tid < nthreads; ++tid) pool.emplace_back(worker, tid);
    worker(0);
    for (auto& th : pool) th.join();

    double total = 0.0;
    for (double v : partial) total += v;
    result.data_ptr<float>()[0] = (float)(total / (double)numel);
    return result;
}

TORCH_LIBRARY(kb_hinge, m) {
    m.def("hinge_loss_mean(Tensor predictions, Tensor targets) -> Tensor", &hinge_loss_mean);
}
"""

load_inline(
    name="kb_hinge_loss_lib",
    cpp_sources=hinge_cpp,
    is_python_module=False,
    extra_cflags=["-O3", "-march=native", "-pthread"],
    extra_ldflags=["-pthread"],
    with_cuda=False,
    verbose=True,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.ops.kb_hinge.hinge_loss_mean(predictions, targets)


def get_inputs():
    predictions = Pareto(0.01, 1.5).sample((batch_size, *input_shape))
    targets = torch.randint(0, 2, (batch_size,)).float() * 2 - 1
    return [predictions, targets]


def get_init_inputs():
    return []
