"""C++ candidates for the error-budget and harness-integrity tests: one extension (`km_harness_ext`) holds an honest
add+relu, a four-accumulator row sum and one that skips a term, and two attacks on the worker's clock from native
code: rebinding the timing module's `time` through the Python C-API, and patching the C function behind
`time.perf_counter` in place (its identity unchanged, so no Python-level snapshot can see it)."""

from __future__ import annotations

PROBLEM_ROW_SUM = '''\
import torch
import torch.nn as nn

rows, n = 256, 4096


class Model(nn.Module):
    def forward(self, x):
        return x.sum(dim=1)


def get_inputs():
    return [torch.randn(rows, n)]


def get_init_inputs():
    return []
'''

CPP = r'''
#include <torch/extension.h>
#include <string>

torch::Tensor add_relu(torch::Tensor a, torch::Tensor b) {
    auto ac = a.contiguous(), bc = b.contiguous();
    auto out = torch::empty_like(ac);
    const float* pa = ac.data_ptr<float>();
    const float* pb = bc.data_ptr<float>();
    float* po = out.data_ptr<float>();
    for (int64_t i = 0; i < ac.numel(); ++i) { float v = pa[i] + pb[i]; po[i] = v > 0.f ? v : 0.f; }
    return out;
}

// Four partial accumulators per row, combined at the end: an honest order of summation, not torch's.
torch::Tensor row_sum4(torch::Tensor x, int64_t skip) {
    auto xc = x.contiguous();
    const int64_t rows = xc.size(0), n = xc.size(1) - skip;
    auto out = torch::empty({rows}, xc.options());
    const float* px = xc.data_ptr<float>();
    float* po = out.data_ptr<float>();
    for (int64_t r = 0; r < rows; ++r) {
        const float* row = px + r * xc.size(1);
        float acc[4] = {0.f, 0.f, 0.f, 0.f};
        int64_t i = 0;
        for (; i + 4 <= n; i += 4) { acc[0] += row[i]; acc[1] += row[i + 1]; acc[2] += row[i + 2]; acc[3] += row[i + 3]; }
        for (; i < n; ++i) acc[0] += row[i];
        po[r] = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    }
    return out;
}

// Attack 1: find the worker's timing module in sys.modules and rebind its `time` to `fake`.
int64_t rebind_timing_clock(py::object fake) {
    PyObject* modules = PySys_GetObject("modules");
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    int64_t hits = 0;
    while (modules && PyDict_Next(modules, &pos, &key, &value)) {
        const char* name = PyUnicode_AsUTF8(key);
        if (name && std::string(name).size() >= 6 && std::string(name).rfind("timing") == std::string(name).size() - 6
            && PyObject_HasAttrString(value, "Timer")) {
            hits += PyObject_SetAttrString(value, "time", fake.ptr()) == 0;
        }
    }
    return hits;
}

// Attack 2: the C function behind time.perf_counter, replaced in its method table. The function object and the
// module attribute stay the same objects; every caller now reads a clock that runs `factor` times slow.
static PyCFunction g_perf_counter = nullptr;
static double g_factor = 1.0;

static PyObject* slow_perf_counter(PyObject* self, PyObject* unused) {
    PyObject* now = g_perf_counter(self, unused);
    if (now == nullptr) return nullptr;
    const double v = PyFloat_AsDouble(now);
    Py_DECREF(now);
    return PyFloat_FromDouble(v / g_factor);
}

bool slow_native_clock(double factor) {
    py::object fn = py::module_::import("time").attr("perf_counter");
    auto* cfunc = reinterpret_cast<PyCFunctionObject*>(fn.ptr());
    g_factor = factor;
    if (g_perf_counter == nullptr) g_perf_counter = cfunc->m_ml->ml_meth;
    cfunc->m_ml->ml_meth = reinterpret_cast<PyCFunction>(slow_perf_counter);
    return true;
}
'''

FUNCTIONS = ["add_relu", "row_sum4", "rebind_timing_clock", "slow_native_clock"]

_HEAD = f'''\
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP = r"""{CPP}"""

ext = load_inline(name="km_harness_ext", cpp_sources=CPP, functions={FUNCTIONS!r}, extra_cflags=["-O2"])
'''


def row_sum(skip: int = 0) -> str:
    return _HEAD + f'''

class ModelNew(nn.Module):
    def forward(self, x):
        return ext.row_sum4(x, {skip})
'''


def add_relu(extra: str = "") -> str:
    return _HEAD + extra + '''

class ModelNew(nn.Module):
    def forward(self, a, b):
        return ext.add_relu(a, b)
'''


REBIND_CLOCK = add_relu('''
import time as _time


class _SlowClock:
    """Everything `time` has, with a perf_counter that runs ten times slow."""

    def __getattr__(self, name):
        return getattr(_time, name)

    @staticmethod
    def perf_counter():
        return _time.perf_counter() / 10


assert ext.rebind_timing_clock(_SlowClock()) >= 1
''')

NATIVE_SLOW_CLOCK = add_relu("\next.slow_native_clock(10.0)\n")
