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


GOT_CPP = r'''
#include <torch/extension.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <cstring>
#include <cstdint>

torch::Tensor add_relu(torch::Tensor a, torch::Tensor b) {
    auto ac = a.contiguous(), bc = b.contiguous();
    auto out = torch::empty_like(ac);
    const float* pa = ac.data_ptr<float>();
    const float* pb = bc.data_ptr<float>();
    float* po = out.data_ptr<float>();
    for (int64_t i = 0; i < ac.numel(); ++i) { float v = pa[i] + pb[i]; po[i] = v > 0.f ? v : 0.f; }
    return out;
}

// The attack: every loaded object's GOT slot bound to clock_gettime (found through the loader's list and the ELF
// relocation tables, as a linker would) now points at a clock that runs `factor` times slow on the monotonic clocks.
typedef int (*clock_fn)(clockid_t, struct timespec*);
static clock_fn g_real = nullptr;
static double g_factor = 1.0;

static int slow_clock(clockid_t id, struct timespec* ts) {
    int r = g_real(id, ts);
    if (r == 0 && (id == CLOCK_MONOTONIC || id == CLOCK_MONOTONIC_RAW)) {
        long double t = (ts->tv_sec + ts->tv_nsec * 1e-9L) / g_factor;
        ts->tv_sec = (time_t)t;
        ts->tv_nsec = (long)((t - ts->tv_sec) * 1e9L);
    }
    return r;
}

static uintptr_t dyn_ptr(uintptr_t value, uintptr_t base) { return value < base ? value + base : value; }

static int patch_object(struct dl_phdr_info* info, size_t, void* data) {
    int* patched = static_cast<int*>(data);
    if (info->dlpi_name && std::strstr(info->dlpi_name, "vdso")) return 0;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        if (info->dlpi_phdr[i].p_type != PT_DYNAMIC) continue;
        auto* dyn = reinterpret_cast<ElfW(Dyn)*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
        uintptr_t jmprel = 0, rela = 0, symtab = 0, strtab = 0;
        size_t jmpsz = 0, relasz = 0;
        for (; dyn->d_tag != DT_NULL; ++dyn) {
            switch (dyn->d_tag) {
                case DT_JMPREL: jmprel = dyn_ptr(dyn->d_un.d_ptr, info->dlpi_addr); break;
                case DT_PLTRELSZ: jmpsz = dyn->d_un.d_val; break;
                case DT_RELA: rela = dyn_ptr(dyn->d_un.d_ptr, info->dlpi_addr); break;
                case DT_RELASZ: relasz = dyn->d_un.d_val; break;
                case DT_SYMTAB: symtab = dyn_ptr(dyn->d_un.d_ptr, info->dlpi_addr); break;
                case DT_STRTAB: strtab = dyn_ptr(dyn->d_un.d_ptr, info->dlpi_addr); break;
            }
        }
        if (!symtab || !strtab) continue;
        const uintptr_t tables[2][2] = {{jmprel, jmpsz}, {rela, relasz}};
        for (auto& table : tables) {
            auto* r = reinterpret_cast<ElfW(Rela)*>(table[0]);
            for (size_t k = 0; r && k < table[1] / sizeof(ElfW(Rela)); ++k) {
                const auto type = ELF64_R_TYPE(r[k].r_info);
                if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) continue;
                auto* sym = reinterpret_cast<ElfW(Sym)*>(symtab) + ELF64_R_SYM(r[k].r_info);
                if (std::strcmp(reinterpret_cast<const char*>(strtab) + sym->st_name, "clock_gettime") != 0) continue;
                auto** slot = reinterpret_cast<clock_fn*>(info->dlpi_addr + r[k].r_offset);
                if (*slot == slow_clock) continue;
                if (!g_real) g_real = *slot;
                const long page = sysconf(_SC_PAGESIZE);
                void* start = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(slot) & ~(uintptr_t)(page - 1));
                if (mprotect(start, page, PROT_READ | PROT_WRITE) != 0) continue;
                *slot = slow_clock;
                ++*patched;
            }
        }
    }
    return 0;
}

int64_t slow_got_clock(double factor) {
    g_factor = factor;
    int patched = 0;
    dl_iterate_phdr(patch_object, &patched);
    return patched;
}
'''


def got_clock(factor: float) -> str:
    """add_relu, honest, from an extension whose import rewrites every GOT slot of `clock_gettime` in the worker."""
    return f'''\
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP = r"""{GOT_CPP}"""

ext = load_inline(name="km_got_clock_ext", cpp_sources=CPP, functions=["add_relu", "slow_got_clock"],
                  extra_cflags=["-O2"])
assert ext.slow_got_clock({factor}) >= 1


class ModelNew(nn.Module):
    def forward(self, a, b):
        return ext.add_relu(a, b)
'''
