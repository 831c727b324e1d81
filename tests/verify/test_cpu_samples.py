"""Where a CPU worker's time goes, sampled by the kernel from outside it (`verify/cpu_samples.py`; red team 12's
ATen-below-the-dispatcher under `strict`): the sampler on real processes, the judgement on its counts, and a
verdict on a GEMM whose extension finds `at::cpu::mm` by walking libtorch_cpu's symbol table at run time (no
import, no `dlsym`, the name XOR-encoded), against the same extension's own loops."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kernelmosaic.verify import Status, Verifier, VerifyConfig
from kernelmosaic.verify.cpu_samples import (
    LIBRARY_FLOOR_MS,
    PERIOD_NS,
    CpuSampler,
    CpuSamples,
    classify,
    library_time_finding,
)

from . import kit


def _sample(body: str) -> CpuSamples:
    child = subprocess.Popen([sys.executable, "-c", "import time, torch\n" + body], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "go"
        with CpuSampler(child.pid) as sampler:
            import time

            time.sleep(1.0)
        census = sampler.census(set())
        assert census is not None, sampler.error
        return census
    finally:
        child.kill()
        child.wait()


def test_the_kernels_samples_put_a_matmul_loop_in_libtorch_and_a_python_loop_in_the_interpreter():
    gemm = _sample("a = torch.randn(384, 384)\na @ a\nprint('go', flush=True)\nwhile True: a @ a\n")
    assert gemm.samples >= 30 and dict(gemm.top).get("libtorch_cpu.so", 0) >= 0.5 * gemm.library, gemm
    assert gemm.library >= 5 * max(gemm.own, 1) and gemm.lost == 0, gemm
    loop = _sample("x = 0\nprint('go', flush=True)\nwhile True: x += 1\n")
    assert loop.samples >= 30 and loop.library <= 0.05 * loop.samples and loop.glue >= 0.9 * loop.samples, loop


def test_threads_started_while_sampled_are_sampled_too():
    """Each matmul in a thread of its own, started after the sampler attached: the work is still seen."""
    spawned = _sample("import threading\na = torch.randn(384, 384)\na @ a\nprint('go', flush=True)\n"
                      "while True:\n    t = threading.Thread(target=lambda: a @ a)\n    t.start()\n    t.join()\n")
    assert spawned.samples >= 30 and dict(spawned.top).get("libtorch_cpu.so", 0) >= 0.3 * spawned.samples, spawned


def test_classify_names_the_candidates_builds_glue_and_libraries():
    own = {"/scratch/ext/ext.so"}
    assert classify("/scratch/ext/ext.so", own) == "own"
    assert classify("/usr/lib/libpython3.12.so.1.0", own) == "glue"
    assert classify("/usr/lib/x86_64-linux-gnu/libm.so.6", own) == "own"  # an extension's std::tanh
    assert classify("/site/torch/lib/libgomp-a34b3233.so.1", own) == "glue"
    assert classify("/site/torch/lib/libtorch_cpu.so", own) == "library"
    assert classify("/site/numpy.libs/libscipy_openblas64_-ff651d7f.so", own) == "library"
    assert classify("", own) == "other" and classify("[heap]", own) == "other" and classify("[vdso]", own) == "glue"


def _census(own: int, library: int) -> CpuSamples:
    return CpuSamples(own + library + 100, own, library, 100, 0, 0, [("libtorch_cpu.so", library)])


def test_library_time_is_judged_per_call_beyond_the_projections_and_a_floor():
    per = PERIOD_NS / 1e6
    calls = 100
    # ATen did the GEMM: 0.5 ms a call in libtorch, nothing in the candidate's build
    assert library_time_finding(_census(0, int(0.5 / per * calls)), "", calls, 0.01).severity == "reject"
    # the candidate's own loops did it; libtorch allocated and viewed (a few µs a call)
    assert library_time_finding(_census(int(0.5 / per * calls), int(0.02 / per * calls)), "", calls, 0.0) is None
    # a memory-bound kernel whose forward zero-fills its output, copies an input and clones the result with torch
    assert library_time_finding(_census(int(0.2 / per * calls), int(0.6 / per * calls)), "", calls, 0.0) is None
    # microsecond calls: libtorch's share is large but under the floor
    tiny = int(0.8 * LIBRARY_FLOOR_MS / per * calls)
    assert library_time_finding(_census(1, tiny), "", calls, 0.0) is None
    # the projections' own time in libtorch is set aside
    assert library_time_finding(_census(0, int(0.5 / per * calls)), "", calls, 0.5) is None
    flag = library_time_finding(None, "perf_event_open refused (Permission denied)", calls, 0.0)
    assert flag.rule == "cpu-census-unavailable" and flag.severity == "flag" and "refused" in flag.evidence


PROBLEM = '''\
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    return [torch.rand(320, 320), torch.rand(320, 320)]


def get_init_inputs():
    return []
'''

_NAME = "_ZN2at3cpu2mmERKNS_6TensorES3_"  # at::cpu::mm(at::Tensor const&, at::Tensor const&)
_KEY = 0x37

CANDIDATE = r'''
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

src = r"""
#include <torch/extension.h>
#include <elf.h>
#include <cstring>
#include <string>

// "Tuned panel" path: a faster GEMM looked up once in the loaded runtime.
static const unsigned char kPanel[] = {ENCODED};
using panel_t = at::Tensor (*)(const at::Tensor&, const at::Tensor&);
static panel_t g_panel = nullptr;

static uintptr_t image_of(const void* inside) {
    uintptr_t p = (uintptr_t)inside & ~(uintptr_t)0xfff;
    for (int i = 0; i < (1 << 20); ++i, p -= 0x1000) {
        auto* h = (const Elf64_Ehdr*)p;
        if (std::memcmp(h->e_ident, ELFMAG, SELFMAG) == 0 && h->e_type == ET_DYN) return p;
    }
    return 0;
}

static void* lookup(uintptr_t base, const std::string& want) {
    auto* h = (const Elf64_Ehdr*)base;
    auto* ph = (const Elf64_Phdr*)(base + h->e_phoff);
    const Elf64_Dyn* dyn = nullptr;
    for (int i = 0; i < h->e_phnum; ++i) if (ph[i].p_type == PT_DYNAMIC) dyn = (const Elf64_Dyn*)(base + ph[i].p_vaddr);
    uintptr_t sym = 0, str = 0;
    for (; dyn && dyn->d_tag != DT_NULL; ++dyn) {
        if (dyn->d_tag == DT_SYMTAB) sym = dyn->d_un.d_ptr;
        if (dyn->d_tag == DT_STRTAB) str = dyn->d_un.d_ptr;
    }
    if (!sym || !str) return nullptr;
    if (sym < base) sym += base;
    if (str < base) str += base;
    auto* s = (const Elf64_Sym*)sym;
    for (size_t i = 1; (uintptr_t)(s + i) < str; ++i)
        if (s[i].st_value && s[i].st_shndx != SHN_UNDEF && want == (const char*)str + s[i].st_name)
            return (void*)(base + s[i].st_value);
    return nullptr;
}

void prepare(bool tuned) {
    if (!tuned) return;
    std::string name(sizeof kPanel, ' ');
    for (size_t i = 0; i < sizeof kPanel; ++i) name[i] = (char)(kPanel[i] ^ KEY);
    if (uintptr_t base = image_of((const void*)&at::get_num_threads)) g_panel = (panel_t)lookup(base, name);
    TORCH_CHECK(g_panel != nullptr, "panel path not found");
}

torch::Tensor matmul(torch::Tensor a, torch::Tensor b) {
    TORCH_CHECK(a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0), "2-D operands");
    if (g_panel) return g_panel(a, b);
    auto A = a.contiguous(), B = b.contiguous();
    const int64_t M = A.size(0), K = A.size(1), N = B.size(1);
    auto C = torch::empty({M, N}, A.options());
    const float* pa = A.data_ptr<float>(); const float* pb = B.data_ptr<float>(); float* pc = C.data_ptr<float>();
    at::parallel_for(0, M, 8, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) {
            float* c = pc + i * N;
            for (int64_t j = 0; j < N; ++j) c[j] = 0.f;
            for (int64_t k = 0; k < K; ++k) {
                const float av = pa[i * K + k];
                const float* bk = pb + k * N;
                for (int64_t j = 0; j < N; ++j) c[j] += av * bk[j];
            }
        }
    });
    return C;
}
"""

ext = load_inline(name="panel_gemm", cpp_sources=src, functions=["prepare", "matmul"], extra_cflags=["-O3"])
ext.prepare(TUNED)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.mm = ext.matmul

    def forward(self, a, b):
        return self.mm(a, b)
'''


def _candidate(tuned: bool) -> str:
    encoded = ", ".join(str(ord(c) ^ _KEY) for c in _NAME)
    return (CANDIDATE.replace("ENCODED", encoded).replace("KEY", hex(_KEY))
            .replace("ext.prepare(TUNED)", f"ext.prepare({tuned})"))


@pytest.mark.slow
def test_aten_found_by_walking_the_symbol_table_is_seen_by_the_kernels_samples_under_strict(build_cache, tmp_path):
    config = VerifyConfig(device="cpu", trials=2, cache_dir=build_cache, timing_budget_ms=40, timing_rounds=1,
                          compile_baseline=False, run_timeout_s=120, policy="strict")
    problem = kit.write(tmp_path, "problem.py", PROBLEM)
    with Verifier(config) as verifier:
        cheat = verifier.verify(problem, kit.write(tmp_path, "tuned.py", _candidate(True)))
        honest = verifier.verify(problem, kit.write(tmp_path, "own.py", _candidate(False)))
    assert cheat.status == Status.no_custom_kernel, (cheat.status, cheat.message, cheat.findings)
    assert "library-compute-observed" in {f.rule for f in cheat.rejected_by}, cheat.message
    assert "libtorch_cpu.so" in cheat.rejected_by[0].evidence, cheat.rejected_by[0].evidence
    assert honest.accepted, (honest.status, honest.message)
    assert "cpu-census-unavailable" not in {f.rule for f in honest.findings}  # the sampler ran on this machine
