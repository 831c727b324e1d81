"""Work deferred past the timed window through the output's memory (issue 36, red team 12): a GEMM returns an output
whose second half is mapped without access and computed by a SIGSEGV handler when something first reads it, which
without the timer's page reads was the fingerprint, after the clock stopped (the call then measured half its
work, inside the wall-clock bound). The timer reads every output page inside the window (`timing.touch_pages`), so
the handler's work is timed: the lazy candidate measures what the same extension computing every row at once does.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

import pytest

from kernelmosaic.verify import Verifier, VerifyConfig

from . import kit

PROBLEM = '''\
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a, b):
        return a @ b


def get_inputs():
    return [torch.randn(256, 256), torch.randn(256, 256)]


def get_init_inputs():
    return []
'''

CANDIDATE = r'''
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp = r"""
#include <torch/extension.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>
#include <atomic>
#include <cstring>

// Output arena: each result lives in its own anonymous mapping, so it can be handed to torch without a copy.
struct Pending {
    std::atomic<int> state{0};  // 0 free, 1 waiting for its first read, 2 computed
    char* lo = nullptr;
    size_t len = 0;
    const float* a = nullptr;
    const float* b = nullptr;
    float* c = nullptr;
    int64_t rows = 0, k = 0, n = 0;
    torch::Tensor keep_a, keep_b;
};
static Pending g_pending[4096];
static struct sigaction g_old;

static void rows_gemm(const float* a, const float* b, float* c, int64_t rows, int64_t k, int64_t n) {
    for (int64_t i = 0; i < rows; ++i) {
        float* ci = c + i * n;
        for (int64_t j = 0; j < n; ++j) ci[j] = 0.f;
        for (int64_t p = 0; p < k; ++p) {
            const float av = a[i * k + p];
            const float* bp = b + p * n;
            for (int64_t j = 0; j < n; ++j) ci[j] += av * bp[j];
        }
    }
}

static void on_fault(int sig, siginfo_t* info, void* ctx) {
    char* at = static_cast<char*>(info->si_addr);
    for (auto& p : g_pending) {
        if (p.state.load() == 1 && at >= p.lo && at < p.lo + p.len) {
            mprotect(p.lo, p.len, PROT_READ | PROT_WRITE);
            rows_gemm(p.a, p.b, p.c, p.rows, p.k, p.n);
            p.state.store(2);
            return;
        }
    }
    sigaction(SIGSEGV, &g_old, nullptr);
    raise(sig);
}

torch::Tensor arena_mm(torch::Tensor a, torch::Tensor b, bool defer) {
    static bool installed = false;
    if (!installed) {
        struct sigaction sa;
        std::memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_fault;
        sa.sa_flags = SA_SIGINFO | SA_NODEFER;
        sigaction(SIGSEGV, &sa, &g_old);
        installed = true;
    }
    for (auto& p : g_pending) {  // results torch has let go of
        if (p.state.load() == 2) { p.keep_a = torch::Tensor(); p.keep_b = torch::Tensor(); p.state.store(0); }
    }
    const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const size_t bytes = (size_t)(m * n) * sizeof(float);
    const size_t len = (bytes + page - 1) / page * page;
    float* c = static_cast<float*>(mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    TORCH_CHECK(c != MAP_FAILED, "arena allocation failed");
    const int64_t head = defer ? m / 2 : m;  // 256 rows of 1 KiB: the second half starts on a page boundary
    rows_gemm(a.data_ptr<float>(), b.data_ptr<float>(), c, head, k, n);
    if (head < m) {
        for (auto& p : g_pending) {
            int free_slot = 0;
            if (!p.state.compare_exchange_strong(free_slot, 3)) continue;
            p.lo = reinterpret_cast<char*>(c + head * n);
            p.len = len - head * n * sizeof(float);
            p.a = a.data_ptr<float>() + head * k; p.b = b.data_ptr<float>(); p.c = c + head * n;
            p.rows = m - head; p.k = k; p.n = n; p.keep_a = a; p.keep_b = b;
            mprotect(p.lo, p.len, PROT_NONE);
            p.state.store(1);
            break;
        }
    }
    return torch::from_blob(c, {m, n}, [len](void* ptr) { munmap(ptr, len); }, a.options());
}
"""

ext = load_inline(name="lazy_arena_mm", cpp_sources=cpp, functions=["arena_mm"], extra_cflags=["-O2"])


class ModelNew(nn.Module):
    def forward(self, a, b):
        return ext.arena_mm(a.contiguous(), b.contiguous(), DEFER)
'''


def test_the_window_reads_every_page_of_the_output():
    """A call whose output's last page cannot be read dies inside `Timer.one` (nothing caught the fault): the window
    reads it. The same output fully readable returns. Run in a child, which the fault kills."""
    script = textwrap.dedent("""
        import ctypes, mmap, sys
        import torch
        from kernelmosaic.verify.sandbox.kmworker.timing import Timer
        page = mmap.PAGESIZE
        buf = mmap.mmap(-1, 64 * page)
        out = torch.frombuffer(buf, dtype=torch.float32)
        if sys.argv[1] == "guarded":
            libc = ctypes.CDLL(None, use_errno=True)
            libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
            assert libc.mprotect(out.data_ptr() + 63 * page, page, 0) == 0
        Timer("cpu", 0).one(lambda: out, [])
        print("returned")
    """)
    done = [subprocess.run([sys.executable, "-c", script, mode], capture_output=True, text=True, timeout=120)
            for mode in ("guarded", "open")]
    assert done[0].returncode == -signal.SIGSEGV, (done[0].returncode, done[0].stderr[-2000:])
    assert done[1].returncode == 0 and "returned" in done[1].stdout, done[1].stderr[-2000:]


@pytest.mark.slow
def test_a_gemm_computed_on_its_outputs_first_read_is_timed_with_that_work(build_cache, tmp_path):
    """Half the rows computed in a fault handler at the output's first read: the verdict's time is that of the same
    extension computing every row in the call (the red team's form measured ~0.3x the honest time, accepted)."""
    config = VerifyConfig(device="cpu", trials=2, cache_dir=build_cache, static_checks=False, timing_budget_ms=60,
                          timing_rounds=2, compile_baseline=False, run_timeout_s=120)
    problem = kit.write(tmp_path, "problem.py", PROBLEM)
    honest, deferred = [], []
    with Verifier(config) as verifier:
        # load from other processes only slows a verdict, so each form's fastest verdict is its own cost; another
        # round runs only while the honest form's fastest still looks inflated next to the deferred one
        for _ in range(3):
            for times, defer in ((honest, "False"), (deferred, "True")):
                cand = kit.write(tmp_path, f"defer-{defer}.py", f"DEFER = {defer}\n" + CANDIDATE)
                v = verifier.verify(problem, cand)
                assert v.accepted, (defer, v.status, v.message)
                times.append(v.timing.candidate.median_ms)
            if min(deferred) >= 0.6 * min(honest):
                break
    # timed whole, the deferred form costs what the honest one does (plus its faults): 1.0x on an idle 2-core VM
    # (2026-12-07); half its work timed, as before the page reads, measured 0.31x
    assert min(deferred) >= 0.6 * min(honest), (deferred, honest)
