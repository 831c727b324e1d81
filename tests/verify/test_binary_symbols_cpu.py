"""What a built extension calls is read from its binary (`verify/binary_check.py`, `static/symbols.py`): a name the
source hides from the static rules (a pasted macro, an assembler label) is plain among its undefined symbols.
Red-team round 10 (held-out cheats, CPU) had three such candidates accepted under `strict`: ATen's CPU matmul
kernel behind `KM_CAT(m, m)`, BLAS `sgemm_` behind an assembler label in an extension built lazily in
`__init__`, and a dispatcher lookup behind a pasted `findSchemaOrThrow`; the round's output computed by a page-fault
handler outside the timed call installs one (`sigaction`, `mprotect`). Real builds, real verifier."""

from __future__ import annotations

import pytest

from kernelmosaic.verify import Status, Verifier, VerifyConfig
from kernelmosaic.verify.static.symbols import symbol_rule

from . import kit

pytestmark = pytest.mark.slow

PROBLEM = '''\
import torch
import torch.nn as nn

N = 64


class Model(nn.Module):
    def forward(self, a, b):
        return a @ b


def get_inputs():
    return [torch.randn(N, N), torch.randn(N, N)]


def get_init_inputs():
    return []
'''

# ATen's CPU kernel for mm, its name pasted together by a macro (`at::cpu::mm` is never written out)
PASTED = '''\
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

src = r"""
#include <torch/extension.h>
#include <ATen/CPUFunctions.h>

namespace blk = at::cpu;  // the per-architecture blocked micro-kernels
#define KM_CAT(p, q) p##q
#define PANEL(a, b) blk::KM_CAT(m, m)(a, b)

torch::Tensor blocked_gemm(const torch::Tensor& a, const torch::Tensor& b) {
    TORCH_CHECK(a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0), "blocked_gemm: bad shapes");
    return PANEL(a.contiguous(), b.contiguous());
}
"""

ext = load_inline(name="km_sym_pasted_mm", cpp_sources=src, functions=["blocked_gemm"], extra_cflags=["-O2"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.gemm = ext.blocked_gemm

    def forward(self, a, b):
        return self.gemm(a, b)
'''

# BLAS through an assembler label, the extension built on first construction (not at import)
LABELLED = '''\
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

src = r"""
#include <torch/extension.h>

// column-major panel routine, resolved from the process image at load time
extern "C" void km_panel(const char* ta, const char* tb, const int* m, const int* n, const int* k,
                         const float* alpha, const float* a, const int* lda, const float* b, const int* ldb,
                         const float* beta, float* c, const int* ldc) __asm__("sg" "emm_");

torch::Tensor panel_matmul(torch::Tensor a, torch::Tensor b) {
    TORCH_CHECK(a.is_contiguous() && b.is_contiguous(), "contiguous inputs");
    const int m = (int)a.size(0), k = (int)a.size(1), n = (int)b.size(1);
    auto c = torch::empty({m, n}, a.options());
    const float one = 1.f, zero = 0.f;
    km_panel("N", "N", &n, &m, &k, &one, b.data_ptr<float>(), &n, a.data_ptr<float>(), &k, &zero,
             c.data_ptr<float>(), &n);
    return c;
}
"""


class _Kernels:
    _mod = None

    @classmethod
    def get(cls):
        if cls._mod is None:
            cls._mod = load_inline(name="km_sym_labelled_blas", cpp_sources=src, functions=["panel_matmul"])
        return cls._mod


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.kernels = _Kernels.get()

    def forward(self, a, b):
        return self.kernels.panel_matmul(a.contiguous(), b.contiguous())
'''


# ATen's matmul except while the run-time operator probe watches (its dispatch mode puts the Python key in the
# thread's included set), names pasted so the source shows neither (red team 11: accepted under strict at 1.00x)
PROBE_AWARE = '''\
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

src = r"""
#include <torch/extension.h>
#define KM_J(p, q) p##q

torch::Tensor own_gemm(const torch::Tensor& a, const torch::Tensor& b) {
    auto c = torch::zeros({a.size(0), b.size(1)}, a.options());
    const float* pa = a.data_ptr<float>();
    const float* pb = b.data_ptr<float>();
    float* pc = c.data_ptr<float>();
    for (int64_t i = 0; i < a.size(0); ++i)
        for (int64_t k = 0; k < a.size(1); ++k)
            for (int64_t j = 0; j < b.size(1); ++j) pc[i * b.size(1) + j] += pa[i * a.size(1) + k] * pb[k * b.size(1) + j];
    return c;
}

torch::Tensor gemm(torch::Tensor a, torch::Tensor b) {
    a = a.contiguous();
    b = b.contiguous();
    if (c10::impl::tls_is_dispatch_key_included(c10::DispatchKey::KM_J(Pyt, hon))) return own_gemm(a, b);
    return at::KM_J(m, m)(a, b);
}
"""

ext = load_inline(name="km_sym_probe_aware_mm", cpp_sources=src, functions=["gemm"], extra_cflags=["-O2"])


class ModelNew(nn.Module):
    def forward(self, a, b):
        return ext.gemm(a, b)
'''


def test_symbols_are_judged_by_the_rule_their_name_would_get():
    assert symbol_rule("at::cpu::mm(at::Tensor const&, at::Tensor const&)") == "aten-compute-in-extension"
    assert symbol_rule("at::native::add(at::Tensor const&, at::Tensor const&, c10::Scalar const&)") \
        == "aten-compute-in-extension"
    assert symbol_rule("at::_ops::mean::redispatch(c10::DispatchKeySet, at::Tensor const&)") \
        == "aten-compute-in-extension"
    assert symbol_rule("c10::Dispatcher::findSchemaOrThrow(char const*, char const*)") == "aten-compute-in-extension"
    assert symbol_rule("sgemm_") == symbol_rule("cblas_sgemm") == symbol_rule("cublasSgemm_v2") == "vendor-library"
    assert symbol_rule("dlsym@GLIBC_2.34") == "dynamic-code"
    assert symbol_rule("openat@GLIBC_2.4") == "reference-access"
    # a GOT slot rewritten (issue 36), an output filled by a page-fault handler outside the timed call (red team 10)
    assert symbol_rule("mprotect@GLIBC_2.2.5") == symbol_rule("dl_iterate_phdr@GLIBC_2.2.5") == "dynamic-code"
    assert symbol_rule("sigaction@GLIBC_2.2.5") == symbol_rule("signal@GLIBC_2.2.5") == "concurrency"
    # the caller's frames read from C to tell timed calls from checks (red team 10); pybind11's own frame calls pass
    assert symbol_rule("PyEval_GetFrame") == symbol_rule("PyRun_SimpleString") == "dynamic-code"
    assert symbol_rule("PyFrame_GetBack") is None and symbol_rule("PyImport_ImportModule") is None
    # a compute operator through the dispatcher's front door: the run-time probe watches only the calls it can tell
    # (red team 11 read the dispatcher's thread state to compute with ATen whenever the probe was away), so the
    # binary answers for it like the source; the thread state itself is read by nothing honest
    assert symbol_rule("at::_ops::mm::call(at::Tensor const&, at::Tensor const&)") == "aten-compute-in-extension"
    assert symbol_rule("at::_ops::add__Tensor::call(at::Tensor&, at::Tensor const&, c10::Scalar const&)") \
        == symbol_rule("at::_ops::sum_dim_IntList::call(at::Tensor const&)") == "aten-compute-in-extension"
    assert symbol_rule("c10::impl::tls_local_dispatch_key_set()") == "dynamic-code"
    assert symbol_rule("c10::impl::TorchDispatchModeTLS::get_stack_len()") == "dynamic-code"
    # what every honest extension references: the dispatcher's front door for allocation, views and copies, ATen's
    # utilities, pybind11, libc
    for honest in ("at::_ops::empty_memory_format::call(c10::ArrayRef<c10::SymInt>, std::optional<c10::ScalarType>)",
                   "at::_ops::empty_like::call(at::Tensor const&)", "at::_ops::contiguous::call(at::Tensor const&)",
                   "at::_ops::_to_copy::call(at::Tensor const&)", "at::_ops::copy_::call(at::Tensor&)",
                   "at::_ops::view::call(at::Tensor const&)", "at::_ops::zeros::call(c10::ArrayRef<c10::SymInt>)",
                   "at::get_num_threads()",
                   "at::cpu::is_avx2_supported()", "c10::impl::ExcludeDispatchKeyGuard::ExcludeDispatchKeyGuard("
                   "c10::DispatchKeySet)", "float* at::TensorBase::data_ptr<float>() const", "PyObject_Call",
                   "memcpy@GLIBC_2.14", "GOMP_parallel@GOMP_4.0", "expf@GLIBC_2.27",
                   "at::cuda::getCurrentCUDAStream(signed char)"):
        assert symbol_rule(honest) is None, honest


def test_names_hidden_from_the_source_are_read_from_the_binary(tmp_path):
    problem = kit.write(tmp_path, "problem.py", PROBLEM)
    pasted, labelled = kit.write(tmp_path, "pasted.py", PASTED), kit.write(tmp_path, "labelled.py", LABELLED)
    config = VerifyConfig(device="cpu", cache_dir=tmp_path / "cache", trials=1, timing=False, compile_baseline=False)
    with Verifier(config) as verifier:
        first = verifier.verify(problem, pasted)
        assert first.status == Status.static_reject, first.message
        assert "aten-compute-in-extension" in first.message and "at::cpu::mm" in first.message, first.message
        assert "kernelbench" in first.message  # what would be accepted instead
        second = verifier.verify(problem, labelled)  # built in the candidate's worker, at construction
        assert second.status == Status.static_reject, second.message
        assert "vendor-library" in second.message and "sgemm_" in second.message, second.message
        aware = verifier.verify(problem, kit.write(tmp_path, "aware.py", PROBE_AWARE))
        assert aware.status == Status.static_reject, aware.message
        assert {"aten-compute-in-extension", "dynamic-code"} <= {f.rule for f in aware.rejected_by}, aware.findings
        assert "at::_ops::mm::call" in aware.message, aware.message
        # under kernelbench PyTorch (and a library) may compute: a flag naming the symbol, and the candidate runs
        loose = verifier.verify(problem, pasted, policy="kernelbench")
        assert loose.status == Status.accepted, loose.message
        assert any(f.rule == "aten-compute-in-extension" and f.severity == "flag" and "at::cpu::mm" in f.message
                   for f in loose.findings), loose.findings
