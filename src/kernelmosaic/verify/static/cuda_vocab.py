"""Names on the C++/CUDA side that a rule owns, matched on identifiers (never on comments or strings)."""

from __future__ import annotations

import re

__all__ = ["identifier_rule", "qualified_rule", "NUMERICS_SETTERS", "LAUNCHERS"]

# Calling back into Python from C++ can reach torch, the verifier's own worker modules (its timer, its checker) or
# anything else without a visible at:: call. The whole CPython API is one rule, not a list of prefixes: every
# `Py<Name>_...`, `Py_...` and `_Py...` identifier and the `PyObject`/`PyTypeObject` family.
_PYTHON_C_API = re.compile(r"^_?Py(_|[A-Z][A-Za-z0-9]*_|[A-Z][A-Za-z0-9]*(Object|Def|Type|Struct)$)")
# pybind11 likewise, except the words a module definition needs (argument names, GIL release, return policy).
_PYBIND_DEFINITION = {"arg", "arg_v", "kw_only", "pos_only", "call_guard", "gil_scoped_release", "return_value_policy",
                      "overload_cast", "const_", "doc", "none"}  # `py::arg("bias") = py::none()`: an optional's default
_VENDOR_PREFIXES = ("cublas", "cudnn", "cufft", "cusparse", "cusolver", "nvblas")
_STREAMS = {
    "cudaStreamCreate", "cudaStreamCreateWithFlags", "cudaStreamCreateWithPriority", "cudaEventCreate",
    "cudaEventCreateWithFlags", "cudaEventRecord", "cudaEventElapsedTime", "cudaStreamBeginCapture",
    "cudaStreamEndCapture", "cudaDeviceSetLimit", "cudaStreamSetAttribute", "cudaStreamAttrValue",
    "accessPolicyWindow", "cudaAccessPolicyWindow", "cudaCtxResetPersistingL2Cache", "cudaLaunchHostFunc",
    "cudaStreamAddCallback", "cudaDeviceReset", "cudaSetDevice", "cudaStreamPerThread",
    "cudaStreamWaitEvent", "cudaGraphLaunch", "cudaGraphInstantiate", "cudaStreamGetCaptureInfo",
    "cudaLimitPersistingL2CacheSize", "cudaThreadExit",
}
_THREAD_STARTS = {"pthread_create", "thrd_create"}
"""Host threads started from C (C++'s `std::thread`, `std::jthread` and `std::async` are qualified names)."""
_DEVICE_CONFIG = {"cudaDeviceSetCacheConfig", "cudaSetDeviceFlags", "cudaMallocManaged", "cudaDeviceSetSharedMemConfig",
                  "cudaMemAdvise", "cudaMemPrefetchAsync"}
_OTHER = {
    "findSchemaOrThrow": "aten-compute-in-extension", "findOp": "aten-compute-in-extension",
    "callBoxed": "aten-compute-in-extension", "Dispatcher": "aten-compute-in-extension",
    "fork": "concurrency", "vfork": "concurrency", "system": "concurrency", "popen": "concurrency",
    "execve": "concurrency", "execvp": "concurrency", "setenv": "env-tamper", "putenv": "env-tamper",
    "unsetenv": "env-tamper", "dlopen": "dynamic-code", "dlsym": "dynamic-code", "fopen": "reference-access",
    "open": "reference-access", "freopen": "reference-access", "readlink": "reference-access",
}
NUMERICS_SETTERS = {
    "setAllowTF32CuBLAS", "setAllowTF32CuDNN", "setFloat32MatmulPrecision", "setBenchmarkCuDNN",
    "setDeterministicCuDNN", "setAllowFP16ReductionCuBLAS", "setAllowBF16ReductionCuBLAS",
    "setDeterministicAlgorithms", "setFlushDenormal",
}
LAUNCHERS = {"cudaLaunchKernel", "cudaLaunchKernelEx", "cudaLaunchCooperativeKernel", "cuLaunchKernel"}
_STREAM_QUALIFIED = {"getStreamFromPool", "setCurrentCUDAStream", "CUDAStreamGuard", "CUDAMultiStreamGuard",
                     "getStreamFromExternal", "CUDAEvent", "CUDAGraph", "CUDACachingAllocator", "emptyCache"}


_DISPATCH_GUARDS = {"ExcludeDispatchKeyGuard", "IncludeDispatchKeyGuard", "ExcludeDispatchKeySetGuard",
                    "IncludeDispatchKeySetGuard", "ForceDispatchKeyGuard", "_ForceDispatchKeyGuard",
                    "_ExcludeDispatchKeyGuard", "_IncludeDispatchKeyGuard"}
"""Guards that take dispatch keys out of (or force them into) the operators called under them: with the Python keys
excluded, the probe's dispatch mode does not see an operator run (a red-team cheat hid an ATen matmul that way)."""


def identifier_rule(name: str) -> str | None:
    """Rule owning an unqualified identifier (call, type or field name)."""
    if _PYTHON_C_API.match(name) or name in _DISPATCH_GUARDS:
        return "dynamic-code"
    if name.startswith(_VENDOR_PREFIXES):
        return "vendor-library"
    if name in _STREAMS:
        return "streams-cuda"
    if name in _THREAD_STARTS:
        return "host-threads"
    if name in _DEVICE_CONFIG:
        return "cuda-device-config"
    if name in NUMERICS_SETTERS:
        return "numerics-switch"
    return _OTHER.get(name)


def qualified_rule(parts: list[str]) -> str | None:
    """Rule owning a qualified name that is not plain ATen compute (namespaces already de-aliased)."""
    root, last = parts[0], parts[-1]
    if root in ("at", "torch", "c10") and any(p in ("blas", "cublas", "cudnn", "cusparse") for p in parts):
        return "vendor-library"
    if root in ("py", "pybind11") and not set(parts[1:]) <= _PYBIND_DEFINITION:
        return "dynamic-code"
    if root in ("cutlass", "cute", "thrust", "cub"):
        return "vendor-template"
    if root == "std" and len(parts) > 1 and parts[1] in ("thread", "jthread", "async"):
        # a pool's size (`std::thread::hardware_concurrency()`) starts nothing
        return None if parts[-1] in ("hardware_concurrency", "id", "get_id") else "host-threads"
    if root == "std" and len(parts) > 1 and parts[1] in ("ifstream", "fstream", "filesystem"):
        return "reference-access"
    if root == "std" and len(parts) > 1 and parts[1] in ("system", "getenv"):
        return "concurrency" if parts[1] == "system" else None
    if last in _STREAM_QUALIFIED or "CUDACachingAllocator" in parts:
        return "streams-cuda"
    if last in ("getCurrentCUDABlasHandle", "getCurrentCUDABlasLtHandle", "getCurrentCUDNNHandle"):
        return "vendor-library"
    if last in NUMERICS_SETTERS:
        return "numerics-switch"
    if "DispatchKey" in parts and last.startswith(("Python", "PreDispatch")):
        return "dynamic-code"  # the keys through which the probe watches operators: excluding them hides calls
    return identifier_rule(last)
