# corpus: problem=kb_l1_021_sigmoid device=cpu expect=accepted policy=both
# style: functools.cache getter, a std::thread pool over chunks joined before return, a void out-kernel, torch.get_num_threads
# class: 1, 7
import functools

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SIGMOID_SRC = r"""
#include <torch/extension.h>
#include <algorithm>
#include <cmath>
#include <thread>
#include <vector>

static void sigmoid_range(const float* __restrict__ in, float* __restrict__ out,
                          int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
        const float v = in[i];
        // numerically stable form for both signs
        if (v >= 0.f) {
            out[i] = 1.f / (1.f + std::exp(-v));
        } else {
            const float e = std::exp(v);
            out[i] = e / (1.f + e);
        }
    }
}

// Writes sigmoid(x) into `out` (preallocated by the caller); returns nothing.
void sigmoid_out(torch::Tensor x, torch::Tensor out, int64_t num_threads) {
    TORCH_CHECK(x.device().is_cpu() && out.device().is_cpu(), "sigmoid_out: CPU tensors expected");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && out.scalar_type() == torch::kFloat32,
                "sigmoid_out: float32 tensors expected");
    TORCH_CHECK(x.is_contiguous() && out.is_contiguous(), "sigmoid_out: contiguous tensors expected");
    TORCH_CHECK(x.numel() == out.numel(), "sigmoid_out: size mismatch");

    const int64_t n = x.numel();
    if (n == 0) return;
    const float* in_ptr = x.data_ptr<float>();
    float* out_ptr = out.data_ptr<float>();

    int64_t nt = num_threads > 0 ? num_threads
                                 : static_cast<int64_t>(std::max(1u, std::thread::hardware_concurrency()));
    const int64_t min_chunk = 1 << 15;
    nt = std::max<int64_t>(1, std::min<int64_t>(nt, (n + min_chunk - 1) / min_chunk));

    if (nt == 1) {
        sigmoid_range(in_ptr, out_ptr, 0, n);
        return;
    }
    const int64_t chunk = (n + nt - 1) / nt;
    std::vector<std::thread> pool;
    pool.reserve(nt - 1);
    for (int64_t t = 1; t < nt; ++t) {
        const int64_t b = t * chunk;
        const int64_t e = std::min(n, b + chunk);
        if (b >= e) break;
        pool.emplace_back(sigmoid_range, in_ptr, out_ptr, b, e);
    }
    sigmoid_range(in_ptr, out_ptr, 0, std::min(n, chunk));  // main thread does chunk 0
    for (auto& th : pool) th.join();
}
"""


@functools.cache
def _get_ext():
    return load_inline(
        name="kb_l1_021_sigmoid__thread_pool",
        cpp_sources=_SIGMOID_SRC,
        functions=["sigmoid_out"],
        extra_cflags=["-O3", "-pthread"],
        extra_ldflags=["-pthread"],
        verbose=False,
    )


class ModelNew(nn.Module):
    """Elementwise sigmoid via a std::thread-parallel C++ kernel."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous().float()
        out = torch.empty_like(x)
        _get_ext().sigmoid_out(x, out, torch.get_num_threads())
        return out
