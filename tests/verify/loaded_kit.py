"""CPU problems and candidates for the timing checks on a loaded machine: the held-out kinds of honest C++ kernel
(a plain add, a ReLU over `at::parallel_for`, a row softmax, a small tiled matmul, a linear layer whose weight a
custom kernel transposes once at the first call and caches) and a clock slowed in native code. Every candidate
loads the same extension source, so the whole module pays for one build (the build cache is keyed by content).
`busy_cores` keeps every core busy with plain Python loops while a test runs."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator

PROBLEMS = {
    "add": '''\
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a, b):
        return a + b


def get_inputs():
    return [torch.randn(1 << 16), torch.randn(1 << 16)]


def get_init_inputs():
    return []
''',
    "relu": '''\
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(64, 4096)]


def get_init_inputs():
    return []
''',
    "softmax": '''\
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(128, 512)]


def get_init_inputs():
    return []
''',
    "matmul": '''\
import torch
import torch.nn as nn

M = K = N = 96


class Model(nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []
''',
    "linear": '''\
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features) / in_features ** 0.5)

    def forward(self, x):
        return x @ self.weight.t()


def get_inputs():
    return [torch.randn(32, 256)]


def get_init_inputs():
    return [256, 128]
''',
}

CPP = r'''
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <algorithm>
#include <cmath>
#include <vector>

torch::Tensor add_forward(torch::Tensor a, torch::Tensor b) {
    TORCH_CHECK(a.sizes() == b.sizes(), "add_forward: shapes differ");
    auto ac = a.contiguous();
    auto bc = b.contiguous();
    auto out = torch::empty_like(ac);
    const float* pa = ac.data_ptr<float>();
    const float* pb = bc.data_ptr<float>();
    float* po = out.data_ptr<float>();
    const int64_t n = ac.numel();
    for (int64_t i = 0; i < n; ++i) po[i] = pa[i] + pb[i];
    return out;
}

torch::Tensor relu_forward(torch::Tensor x) {
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    const float* px = xc.data_ptr<float>();
    float* po = out.data_ptr<float>();
    at::parallel_for(0, xc.numel(), 2048, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) po[i] = px[i] > 0.f ? px[i] : 0.f;
    });
    return out;
}

torch::Tensor softmax_rows(torch::Tensor x) {
    TORCH_CHECK(x.dim() == 2, "softmax_rows expects a 2-D tensor");
    auto xc = x.contiguous();
    const int64_t rows = xc.size(0), cols = xc.size(1);
    auto out = torch::empty_like(xc);
    const float* px = xc.data_ptr<float>();
    float* po = out.data_ptr<float>();
    at::parallel_for(0, rows, 8, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const float* row = px + r * cols;
            float* dst = po + r * cols;
            float mx = row[0];
            for (int64_t c = 1; c < cols; ++c) mx = std::max(mx, row[c]);
            double sum = 0.0;
            for (int64_t c = 0; c < cols; ++c) { dst[c] = std::exp(row[c] - mx); sum += dst[c]; }
            const float inv = static_cast<float>(1.0 / sum);
            for (int64_t c = 0; c < cols; ++c) dst[c] *= inv;
        }
    });
    return out;
}

// C = A (M x K) times B (K x N), 32-wide tiles of k so a row of B stays in cache.
torch::Tensor matmul_tiled(torch::Tensor a, torch::Tensor b) {
    TORCH_CHECK(a.size(1) == b.size(0), "matmul_tiled: inner sizes differ");
    auto ac = a.contiguous();
    auto bc = b.contiguous();
    const int64_t M = ac.size(0), K = ac.size(1), N = bc.size(1);
    auto out = torch::zeros({M, N}, ac.options());
    const float* pa = ac.data_ptr<float>();
    const float* pb = bc.data_ptr<float>();
    float* pc = out.data_ptr<float>();
    constexpr int64_t TILE = 32;
    for (int64_t k0 = 0; k0 < K; k0 += TILE) {
        const int64_t k1 = std::min(K, k0 + TILE);
        for (int64_t i = 0; i < M; ++i) {
            for (int64_t k = k0; k < k1; ++k) {
                const float aik = pa[i * K + k];
                for (int64_t j = 0; j < N; ++j) pc[i * N + j] += aik * pb[k * N + j];
            }
        }
    }
    return out;
}

torch::Tensor transpose_2d(torch::Tensor w) {
    auto wc = w.contiguous();
    const int64_t rows = wc.size(0), cols = wc.size(1);
    auto out = torch::empty({cols, rows}, wc.options());
    const float* pw = wc.data_ptr<float>();
    float* po = out.data_ptr<float>();
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) po[c * rows + r] = pw[r * cols + c];
    return out;
}

// A clock attack: the C function behind time.perf_counter replaced in its method table, so every caller in the
// worker reads a clock that runs `factor` times slow (the function object's identity is unchanged).
static PyCFunction g_perf_counter = nullptr;
static double g_factor = 1.0;

static PyObject* slowed_perf_counter(PyObject* self, PyObject* unused) {
    PyObject* now = g_perf_counter(self, unused);
    if (now == nullptr) return nullptr;
    const double v = PyFloat_AsDouble(now);
    Py_DECREF(now);
    return PyFloat_FromDouble(v / g_factor);
}

bool slow_clock(double factor) {
    py::object fn = py::module_::import("time").attr("perf_counter");
    auto* cfunc = reinterpret_cast<PyCFunctionObject*>(fn.ptr());
    g_factor = factor;
    if (g_perf_counter == nullptr) g_perf_counter = cfunc->m_ml->ml_meth;
    cfunc->m_ml->ml_meth = reinterpret_cast<PyCFunction>(slowed_perf_counter);
    return true;
}
'''

FUNCTIONS = ["add_forward", "relu_forward", "softmax_rows", "matmul_tiled", "transpose_2d", "slow_clock"]

_HEAD = f'''\
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpu_source = r"""{CPP}"""

kernels = load_inline(name="km_loaded_ext", cpp_sources=cpu_source, functions={FUNCTIONS!r},
                      extra_cflags=["-O2"], verbose=False)
'''

CANDIDATES = {
    "add": _HEAD + '''

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.add = kernels.add_forward

    def forward(self, a, b):
        return self.add(a, b)
''',
    "relu": _HEAD + '''

class ModelNew(nn.Module):
    def forward(self, x):
        return kernels.relu_forward(x)
''',
    "softmax": _HEAD + '''

def row_softmax(x):
    return kernels.softmax_rows(x.contiguous())


class ModelNew(nn.Module):
    def forward(self, x):
        return row_softmax(x)
''',
    "matmul": _HEAD + '''

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.mm = kernels.matmul_tiled

    def forward(self, a, b):
        return self.mm(a, b)
''',
    "linear": _HEAD + '''

class ModelNew(nn.Module):
    """The weight is transposed once, by the extension, on the first call; later calls reuse the cached copy."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features) / in_features ** 0.5)
        self.weight_t = None

    def forward(self, x):
        if self.weight_t is None:
            self.weight_t = kernels.transpose_2d(self.weight.detach())
        return kernels.matmul_tiled(x, self.weight_t)
''',
}

def slow_clock(factor: float) -> str:
    """The add candidate, honest in its results, with the worker's clock slowed `factor` times (problem `add`)."""
    return _HEAD + f'''
kernels.slow_clock({factor})


class ModelNew(nn.Module):
    def forward(self, a, b):
        return kernels.add_forward(a, b)
'''


@contextlib.contextmanager
def busy_cores(per_core: int = 1) -> Iterator[int]:
    """`per_core` plain Python busy loops per core for the duration of the block; yields how many were started.
    Each runs in its own process group and is killed by its own id afterwards."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
             for _ in range(per_core * (os.cpu_count() or 1))]
    try:
        yield len(procs)
    finally:
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
            p.wait()
