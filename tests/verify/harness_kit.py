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

// Attack 3: the same clock through the function object's own vectorcall slot (on the heap, not in libpython): the
// method table stays as it was, and calls from Python go through the slot.
static vectorcallfunc g_perf_vc = nullptr;

static PyObject* slow_perf_vectorcall(PyObject* callable, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
    PyObject* now = g_perf_vc(callable, args, nargsf, kwnames);
    if (now == nullptr) return nullptr;
    const double v = PyFloat_AsDouble(now);
    Py_DECREF(now);
    return PyFloat_FromDouble(v / g_factor);
}

bool slow_vectorcall_clock(double factor) {
    py::object fn = py::module_::import("time").attr("perf_counter");
    auto* cfunc = reinterpret_cast<PyCFunctionObject*>(fn.ptr());
    g_factor = factor;
    if (g_perf_vc == nullptr) g_perf_vc = cfunc->vectorcall;
    cfunc->vectorcall = slow_perf_vectorcall;
    return true;
}
'''

FUNCTIONS = ["add_relu", "row_sum4", "rebind_timing_clock", "slow_native_clock", "slow_vectorcall_clock"]

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


def _clock_candidate(cpp: str, name: str, op: str, factor: float) -> str:
    """A candidate whose extension `name` (source `cpp`) runs `op` in forward and, on import, rewrites the GOT slots
    of `clock_gettime` with `slow_got_clock(factor)`."""
    return f'''\
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP = r"""{cpp}"""

ext = load_inline(name="{name}", cpp_sources=CPP, functions=["{op}", "slow_got_clock"],
                  extra_cflags=["-O2"])
{"" if factor == 1.0 else f"assert ext.slow_got_clock({factor}) >= 1"}


class ModelNew(nn.Module):
    def forward(self, a, b):
        return ext.{op}(a, b)
'''


def got_clock(factor: float) -> str:
    """add_relu, honest, from an extension whose import rewrites every GOT slot of `clock_gettime` in the worker."""
    return _clock_candidate(GOT_CPP, "km_got_clock_ext", "add_relu", factor)


PROBLEM_MATMUL = '''\
import torch
import torch.nn as nn

n = 160


class Model(nn.Module):
    def forward(self, a, b):
        return a @ b


def get_inputs():
    return [torch.randn(n, n), torch.randn(n, n)]


def get_init_inputs():
    return []
'''

# Issue 36: a clock that lies only while it is not watched. The GOT slots of `clock_gettime` now lead to a clock
# whose rate the extension sets (continuous, so no jump shows); calls that come back to back (the wall-clock burst:
# no fresh draw or flush between them) run at the true rate and are answered from a memo keyed on their inputs'
# content, every other call computes under a clock slowed `g_factor` times.
_MEMO_CLOCK = r'''
static long double g_virtual = -1, g_last_real = 0;
static double g_rate = 1.0;
static int slow_clock(clockid_t id, struct timespec* ts) {
    int r = g_real(id, ts);
    if (r == 0 && (id == CLOCK_MONOTONIC || id == CLOCK_MONOTONIC_RAW)) {
        long double real = ts->tv_sec + ts->tv_nsec * 1e-9L;
        if (g_virtual < 0) { g_virtual = real; g_last_real = real; }
        if (real > g_last_real) { g_virtual += (real - g_last_real) * g_rate; g_last_real = real; }
        ts->tv_sec = (time_t)g_virtual;
        ts->tv_nsec = (long)((g_virtual - ts->tv_sec) * 1e9L);
    }
    return r;
}

static long double real_now() { struct timespec ts; g_real(CLOCK_MONOTONIC, &ts); return ts.tv_sec + ts.tv_nsec * 1e-9L; }
static long double g_last_return = 0;
static std::vector<std::pair<uint64_t, torch::Tensor>> g_memo;

static uint64_t key_of(const torch::Tensor& a, const torch::Tensor& b) {
    uint64_t h = 1469598103934665603ull;
    const float* pa = a.data_ptr<float>();
    const float* pb = b.data_ptr<float>();
    for (int64_t i = 0; i < a.numel(); i += 97) { uint32_t v; std::memcpy(&v, pa + i, 4); h = (h ^ v) * 1099511628211ull; }
    for (int64_t i = 0; i < b.numel(); i += 89) { uint32_t v; std::memcpy(&v, pb + i, 4); h = (h ^ v) * 1099511628211ull; }
    return h;
}

static torch::Tensor naive_mm(const torch::Tensor& a, const torch::Tensor& b) {
    const int64_t n = a.size(0), k = a.size(1), m = b.size(1);
    auto out = torch::zeros({n, m}, a.options());
    const float* pa = a.data_ptr<float>();
    const float* pb = b.data_ptr<float>();
    float* po = out.data_ptr<float>();
    for (int64_t i = 0; i < n; ++i)
        for (int64_t p = 0; p < k; ++p) {
            const float av = pa[i * k + p];
            for (int64_t j = 0; j < m; ++j) po[i * m + j] += av * pb[p * m + j];
        }
    return out;
}

static void remember(uint64_t key, const torch::Tensor& out) {
    g_memo.emplace_back(key, out);
    if (g_memo.size() > 8) g_memo.erase(g_memo.begin());
}

torch::Tensor matmul(torch::Tensor a, torch::Tensor b) {
    auto ac = a.contiguous(), bc = b.contiguous();
    const bool watched = g_last_return > 0 && real_now() - g_last_return < 2e-4L;
    g_rate = watched ? 1.0 : 1.0 / g_factor;
    const uint64_t key = key_of(ac, bc);
    torch::Tensor out;
    if (watched)
        for (auto& e : g_memo) if (e.first == key) out = e.second;
    if (!out.defined()) { out = naive_mm(ac, bc); remember(key, out); }
    g_last_return = real_now();
    return out;
}
'''


def _patcher_with(hook: str, prefix: str | None = None, entry: str = "slow_got_clock") -> str:
    """GOT_CPP's includes and GOT patcher without its add_relu, its clock hook (`clock_fn`, `g_real`, `g_factor`,
    `slow_clock`) replaced by `hook`, from a function named `entry`; it patches the slots of `clock_gettime`, or of
    every symbol whose name begins with `prefix` (versioned names too)."""
    head = GOT_CPP[:GOT_CPP.index("torch::Tensor add_relu")]
    patcher = GOT_CPP[GOT_CPP.index("static uintptr_t dyn_ptr("):]
    if prefix is not None:
        patcher = patcher.replace(
            'std::strcmp(reinterpret_cast<const char*>(strtab) + sym->st_name, "clock_gettime") != 0',
            f'std::strncmp(reinterpret_cast<const char*>(strtab) + sym->st_name, "{prefix}", {len(prefix)}) != 0')
    patcher = patcher.replace("int64_t slow_got_clock(double factor) {", f"int64_t {entry}(double factor) {{")
    assert (prefix or "clock_gettime") in patcher and entry in patcher
    return head + hook + "\n" + patcher


_CLOCK_DECLS = GOT_CPP[GOT_CPP.index("typedef int (*clock_fn)"):GOT_CPP.index("static int slow_clock(")]


def memo_clock(factor: float) -> str:
    """The naive matmul of PROBLEM_MATMUL, honest in its results, from an extension whose import points every GOT
    slot of `clock_gettime` at a clock that runs `factor` times slow except during back-to-back calls, which a memo
    of earlier results answers (factor 1: the same extension, its clock left alone)."""
    cpp = _patcher_with(_CLOCK_DECLS + _MEMO_CLOCK)
    # the true clock from the loader's own relocation, so the memo's clock runs whether or not the slots are patched
    cpp = cpp.replace("static clock_fn g_real = nullptr;", "static clock_fn g_real = ::clock_gettime;")
    cpp = cpp.replace("#include <cstdint>", "#include <cstdint>\n#include <utility>\n#include <vector>")
    return _clock_candidate(cpp, "km_memo_clock_ext", "matmul", factor)


_EVENT_HOOK = r'''
typedef int (*clock_fn)(float*, void*, void*);
static clock_fn g_real = nullptr;
static double g_factor = 1.0;

static int slow_clock(float* ms, void* start, void* end) {
    int r = g_real(ms, start, end);
    if (r == 0 && ms) *ms = (float)(*ms / g_factor);
    return r;
}
'''


def event_lie_cpp(factor: float) -> str:
    """Host code whose `lie_about_events()` points every loaded object's GOT slot of `cudaEventElapsedTime` (and
    its versioned names) at one that reports `factor` times less than the events measured: found through the
    loader's list and the ELF relocation tables, the name never called (issue 36, the H200 review's attack)."""
    return _patcher_with(_EVENT_HOOK, "cudaEventElapsedTime", "lie_about_events") + f"\n// factor {factor}\n"


def got_clock_inside_calls() -> str:
    """add_relu, honest (computed 200 times over per call: long calls),
    whose every call points the GOT slots of `clock_gettime` at a slow clock on entry and puts
    them back on return: between calls (where the verifier checks after a phase) the tables look untouched."""
    cpp = GOT_CPP.replace("static clock_fn g_real = nullptr;", "static clock_fn g_real = ::clock_gettime;")
    cpp = cpp.replace("                if (*slot == slow_clock) continue;",
                      "                if (g_restore) { if (*slot == slow_clock) *slot = g_real; continue; }\n"
                      "                if (*slot == slow_clock) continue;")
    cpp = cpp.replace("static double g_factor = 1.0;", "static double g_factor = 1.0;\nstatic bool g_restore = false;")
    cpp += r'''
torch::Tensor add_relu_patched(torch::Tensor a, torch::Tensor b) {
    g_restore = false;
    slow_got_clock(2.0);
    auto out = add_relu(a, b);
    for (int k = 0; k < 200; ++k) out = add_relu(a, b);  // long calls: the slots stay rewritten most of the time
    g_restore = true;
    int restored = 0;
    dl_iterate_phdr(patch_object, &restored);
    return out;
}
'''
    assert "g_restore" in cpp and cpp.count("g_restore = true") == 1
    return f'''\
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP = r"""{cpp}"""

ext = load_inline(name="km_got_inside_calls_ext", cpp_sources=CPP, functions=["add_relu_patched"],
                  extra_cflags=["-O2"])


class ModelNew(nn.Module):
    def forward(self, a, b):
        return ext.add_relu_patched(a, b)
'''


_ADD_RELU = CPP[CPP.index("torch::Tensor add_relu("):CPP.index("// Four partial accumulators")]
"""The honest add+relu of `km_harness_ext`, for the attack extensions below to carry."""

CODE_PATCH_CPP = r'''
#include <torch/extension.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cstring>
#include <ctime>

''' + _ADD_RELU + r'''
// The attack: libc's clock_gettime itself starts with a jump to a clock that runs `factor` times slow (read with a
// raw system call, so the patched function is never re-entered). No GOT slot changes; the code does.
static double g_factor = 1.0;

static int slow_clock(clockid_t id, struct timespec* ts) {
    int r = (int)syscall(SYS_clock_gettime, id, ts);
    if (r == 0 && (id == CLOCK_MONOTONIC || id == CLOCK_MONOTONIC_RAW)) {
        long double t = (ts->tv_sec + ts->tv_nsec * 1e-9L) / g_factor;
        ts->tv_sec = (time_t)t;
        ts->tv_nsec = (long)((t - ts->tv_sec) * 1e9L);
    }
    return r;
}

bool patch_clock_code(double factor) {
    g_factor = factor;
    unsigned char* target = reinterpret_cast<unsigned char*>(&clock_gettime);
    const long page = sysconf(_SC_PAGESIZE);
    uintptr_t start = reinterpret_cast<uintptr_t>(target) & ~(uintptr_t)(page - 1);
    if (mprotect(reinterpret_cast<void*>(start), 2 * page, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) return false;
    unsigned char jump[12] = {0x48, 0xB8, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xE0};  // movabs rax, slow_clock; jmp rax
    void* to = reinterpret_cast<void*>(&slow_clock);
    std::memcpy(jump + 2, &to, sizeof(to));
    std::memcpy(target, jump, sizeof(jump));
    mprotect(reinterpret_cast<void*>(start), 2 * page, PROT_READ | PROT_EXEC);
    return true;
}
'''


def clock_code_patch(factor: float) -> str:
    """add_relu, honest, from an extension whose import rewrites the first instructions of libc's `clock_gettime`."""
    return f'''\
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP = r"""{CODE_PATCH_CPP}"""

ext = load_inline(name="km_clock_code_patch_ext", cpp_sources=CPP, functions=["add_relu", "patch_clock_code"],
                  extra_cflags=["-O2"])
assert ext.patch_clock_code({factor})


class ModelNew(nn.Module):
    def forward(self, a, b):
        return ext.add_relu(a, b)
'''


TIMER_SCALE_CPP = r'''
#include <torch/extension.h>

''' + _ADD_RELU + r'''
// The attack: the float objects the worker's timing code multiplies by (1000.0, seconds to ms), rewritten in place.
int64_t shrink_constants(py::list floats, double value) {
    int64_t n = 0;
    for (auto item : floats) {
        PyObject* f = item.ptr();
        if (PyFloat_CheckExact(f)) { reinterpret_cast<PyFloatObject*>(f)->ob_fval = value; ++n; }
    }
    return n;
}
'''


def timer_scale(value: float) -> str:
    """add_relu, honest, whose import rewrites every 1000.0 constant of the worker's timing code to `value` (found
    through the timing functions' code objects, as red team 12 found them)."""
    return f'''\
import sys
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP = r"""{TIMER_SCALE_CPP}"""

ext = load_inline(name="km_timer_scale_ext", cpp_sources=CPP, functions=["add_relu", "shrink_constants"],
                  extra_cflags=["-O2"])
_timing = sys.modules["kmworker.timing"]
_found = [c for f in vars(_timing.Timer).values() if hasattr(f, "__code__") for c in f.__code__.co_consts
          if type(c) is float and c == 1000.0]
assert ext.shrink_constants(_found, {value}) >= 1


class ModelNew(nn.Module):
    def forward(self, a, b):
        return ext.add_relu(a, b)
'''
