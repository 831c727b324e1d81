"""Rules owning a symbol that a built extension leaves for the dynamic linker to resolve (its undefined symbols).

The source-level rules match names in the candidate's text; a macro that pastes tokens (`m##m`), an assembler label
(`void f(...) __asm__("sg" "emm_")`) or a namespace alias hides a name from them, never from the binary: whatever the
extension calls outside itself is one of its undefined dynamic symbols, by its real name. A symbol maps to the rule
its name would get in the source, for the calls no honest kernel of this project's kind needs and the runtime
probes cannot see: ATen's kernels entered below the dispatcher (`at::cpu::mm`, `at::native::*`, an operator's
`redispatch`, dispatcher lookups), BLAS/LAPACK and vendor libraries, dynamic loading, processes and files, page
protections and signal handlers (work done on a fault, outside the timed call; a timer or a GOT slot rewritten).
A compute operator through the dispatcher's front door (`at::_ops::mm::call`) is ATen compute as in the source,
and reading the dispatcher's thread state tells the calls the run-time probe watches from the others; the CPython
and pybind11 symbols every extension module references are not judged here.
"""

from __future__ import annotations

import re

from kernelmosaic.verify.static.aten_ops import names_operator, operator_names
from kernelmosaic.verify.static.cuda_vocab import qualified_rule
from kernelmosaic.verify.static.vocab import dispatched_kind

__all__ = ["symbol_rule"]

_BLAS = re.compile(r"^(i?[sdcz](gemm|gemv|ger|gerc|geru|axpy|axpby|dot|dotc|dotu|scal|copy|swap|nrm2|asum|amax|amin|rot|"
                   r"rotg|symm|symv|syrk|syr2k|trmm|trmv|trsm|trsv|hemm|hemv|herk|her2k|gbmv|sbmv|spmv|tbmv|getrf|"
                   r"getrs|getri|gesv|potrf|potrs|potri|geqrf|orgqr|ormqr|gesdd|gesvd|syevd|syev|heevd|heev|trtrs|"
                   r"gels|gelsd|gelsy|lacpy|laswp|gemm3m|imatcopy|omatcopy)|sdsdot|dsdot)_?$")
_VENDOR_C = ("cblas_", "LAPACKE_", "lapack_", "mkl_", "MKL_", "dnnl_", "mkldnn_", "openblas_", "bli_", "cublas",
             "cudnn", "cufft", "cusparse", "cusolver", "nvblas")
_C_RULES = {
    "dlopen": "dynamic-code", "dlsym": "dynamic-code", "dlvsym": "dynamic-code", "dlmopen": "dynamic-code",
    "fork": "concurrency", "vfork": "concurrency", "system": "concurrency", "popen": "concurrency",
    "execve": "concurrency", "execv": "concurrency", "execvp": "concurrency", "execvpe": "concurrency",
    "execl": "concurrency", "execlp": "concurrency", "execle": "concurrency", "posix_spawn": "concurrency",
    "posix_spawnp": "concurrency", "setenv": "env-tamper", "putenv": "env-tamper", "unsetenv": "env-tamper",
    "fopen": "reference-access", "fopen64": "reference-access", "open": "reference-access", "open64": "reference-access",
    "openat": "reference-access", "openat64": "reference-access", "freopen": "reference-access",
    "readlink": "reference-access", "process_vm_readv": "reference-access", "process_vm_writev": "reference-access",
    "ptrace": "reference-access",
    # page protections, the loaded objects' tables, raw system calls: how native code rewrites the timer, the clock
    # or the reply channel in its own process (issue 36), or hides its work behind protected output pages
    "mprotect": "dynamic-code", "pkey_mprotect": "dynamic-code", "dl_iterate_phdr": "dynamic-code",
    "dladdr": "dynamic-code", "dlinfo": "dynamic-code", "syscall": "dynamic-code", "prctl": "dynamic-code",
    # the interpreter's own call stack and code, from native code: how a candidate tells its timed calls from its
    # checks (red team 10 read the caller's frames under pasted C-API names); pybind11 needs none of these
    "PyEval_GetFrame": "dynamic-code", "PyThreadState_GetFrame": "dynamic-code", "_PyEval_GetFrame": "dynamic-code",
    "PyEval_GetGlobals": "dynamic-code", "PyEval_GetLocals": "dynamic-code", "PyEval_GetFrameGlobals": "dynamic-code",
    "PyEval_GetFrameLocals": "dynamic-code", "PyEval_GetFrameBuiltins": "dynamic-code", "PyEval_SetTrace": "dynamic-code",
    "PyEval_SetProfile": "dynamic-code", "PyEval_SetTraceAllThreads": "dynamic-code",
    "PyEval_SetProfileAllThreads": "dynamic-code", "PyRun_String": "dynamic-code", "PyRun_StringFlags": "dynamic-code",
    "PyRun_SimpleString": "dynamic-code", "PyRun_SimpleStringFlags": "dynamic-code", "Py_CompileString": "dynamic-code",
    "Py_CompileStringExFlags": "dynamic-code", "Py_CompileStringObject": "dynamic-code", "PyEval_EvalCode": "dynamic-code",
    "PyEval_EvalCodeEx": "dynamic-code", "PyImport_ExecCodeModule": "dynamic-code", "PyImport_AddModule": "dynamic-code",
    "PySys_SetObject": "dynamic-code",
    # the dispatcher's thread state, read from native code: how a candidate tells the calls the run-time operator
    # probe watches (its dispatch mode sets the Python key) from the others (red team 11)
    "c10::impl::tls_local_dispatch_key_set": "dynamic-code", "c10::impl::tls_is_dispatch_key_included": "dynamic-code",
    "c10::impl::tls_is_dispatch_key_excluded": "dynamic-code", "c10::impl::tls_is_dispatch_keyset_included":
        "dynamic-code", "c10::impl::tls_is_dispatch_keyset_excluded": "dynamic-code",
    "c10::impl::TorchDispatchModeTLS::get_stack_len": "dynamic-code",
    "c10::impl::TorchDispatchModeTLS::get_stack_at": "dynamic-code",
    "c10::impl::TorchDispatchModeTLS::get_state": "dynamic-code",
    "c10::impl::TorchDispatchModeTLS::any_modes_set": "dynamic-code",
    "c10::impl::PythonDispatcherTLS::get_state": "dynamic-code",
    "at::impl::PythonTorchFunctionTLS::get_state": "dynamic-code",
    # code run outside the call: on a signal (a page fault of a lazily filled output), a timer, another process
    "sigaction": "concurrency", "signal": "concurrency", "sigset": "concurrency", "bsd_signal": "concurrency",
    "__sysv_signal": "concurrency", "timer_create": "concurrency", "setitimer": "concurrency",
    "alarm": "concurrency", "kill": "concurrency", "tgkill": "concurrency", "setsid": "concurrency",
    "setpgid": "concurrency", "clone": "concurrency", "clone3": "concurrency",
}
_BELOW_DISPATCH = {"native", "cpublas", "compositeexplicitautograd", "compositeexplicitautogradnonfunctional",
                   "compositeimplicitautograd", "mkldnn"}
"""`at::<namespace>::` entry points of ATen's kernels that do not go through the dispatcher."""
_BACKENDS = {"cpu", "cuda", "mps"}
"""`at::<backend>::<op>`: a structured kernel called directly (also home to queries such as `at::cpu::is_avx2...`)."""
_DISPATCHER_LOOKUPS = {"findSchema", "findSchemaOrThrow", "findOp", "callBoxed", "redispatchBoxed", "callWithDispatchKey"}


def _ops_kind(struct: str) -> str:
    """`compute`, `noncompute` or `unknown` for the operator an `at::_ops::<struct>` entry point calls: the struct is
    the operator's name and its overload (`add__Tensor`: `add_`, overload `Tensor`; `sum_dim_IntList`: `sum`)."""
    ops = operator_names()
    pieces = struct.split("_")
    for k in range(len(pieces), 0, -1):
        name = "_".join(pieces[:k])
        kind = dispatched_kind(name)
        if name and (ops is None or name.rstrip("_") in ops or name in ops) and kind != "unknown":
            return kind
    return "unknown"


def _name(symbol: str) -> str:
    """`at::cpu::mm(at::Tensor const&, at::Tensor const&)` -> `at::cpu::mm`; `sgemm_@GLIBC` -> `sgemm_`."""
    name = symbol.split("@", 1)[0].strip()
    depth, out = 0, []
    for ch in name:  # drop the argument list and template arguments: what stays is the qualified name
        if ch in "(<":
            depth += 1
        elif ch in ")>":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    name = "".join(out).strip()
    return name.split(" ")[-1]  # a return type written before the name (`float* at::TensorBase::data_ptr<float>`)


def symbol_rule(symbol: str) -> str | None:
    """The rule that owns an undefined symbol of a built extension (demangled), or None."""
    name = _name(symbol)
    if name in _C_RULES:
        return _C_RULES[name]
    if "::" not in name:
        if name in _C_RULES:
            return _C_RULES[name]
        if name.startswith(_VENDOR_C) or _BLAS.match(name):
            return "vendor-library"
        return None
    parts = [p for p in name.split("::") if p]
    if parts[0] == "at" and len(parts) > 2:
        if parts[1] in _BELOW_DISPATCH:
            return "aten-compute-in-extension"
        if parts[1] == "_ops" and parts[-1] == "redispatch":
            return "aten-compute-in-extension"  # skips the dispatch keys the run-time probe watches through
        if parts[1] == "_ops" and len(parts) == 4 and parts[3] == "call" and _ops_kind(parts[2]) == "compute":
            # through the dispatcher, but the run-time probe watches only the calls it can tell (red team 11: an
            # extension that reads the dispatcher's thread state computes with ATen whenever the probe is away)
            return "aten-compute-in-extension"
        if parts[1] in _BACKENDS and len(parts) == 3 and (ops := operator_names()) is not None \
                and names_operator(["at", parts[2]], ops):
            return "aten-compute-in-extension"
    if parts[0] == "c10" and any(p in ("Dispatcher", "OperatorHandle") for p in parts) \
            and parts[-1] in _DISPATCHER_LOOKUPS:
        return "aten-compute-in-extension"
    if parts[0] in ("dnnl", "mkldnn", "ideep"):
        return "vendor-library"
    rule = qualified_rule(parts)
    return rule if rule == "vendor-library" else None
