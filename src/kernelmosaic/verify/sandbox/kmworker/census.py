"""A kernel census of one forward pass: which GPU kernels ran, and which came from the candidate itself.

A kernel is the candidate's own unless it is library code: ATen, cuBLAS/cuDNN, CUTLASS-in-library, CuPy's built-in
kernels, or code PyTorch's compiler generated at run time. `torch.compile` called inside `ModelNew` is PyTorch compute
under every policy: the Triton kernels Inductor generates for it are known here by provenance (the modules Inductor
loaded in this process, whatever their kernels are named) as well as by Inductor's naming (`triton_poi_…`, and the
bare `triton_` of `unique_kernel_names=False`). The candidate's own Triton kernels live in its module, not Inductor's.
"""

from __future__ import annotations

import os
import re
import sys

import torch

__all__ = ["kernel_census", "is_library_kernel", "inductor_kernel_names", "quiet_compiler_threads"]

# Kernel-name fragments of ATen, cuBLAS/cuBLASLt, cuDNN, CUTLASS-in-library and torch's own generated code.
_LIBRARY_MARKERS = ("at::native::", "at::cuda::", "void at::", "c10::", "cublas", "cublasLt", "cudnn", "sm90_xmma",
                    "sm80_xmma", "xmma_", "ampere_", "hopper_", "volta_", "turing_", "gemv2", "gemmk1", "splitKreduce",
                    "cutlass::Kernel", "nvjet", "CatArrayBatchedCopy", "Memcpy", "Memset",
                    # Inductor's kernel categories (torch/_inductor/wrapper_benchmark.py): pointwise, reduction,
                    # persistent reduction, template, foreach, split scan, and a source it could not classify
                    "triton_poi_", "triton_red_", "triton_per_", "triton_tem_", "triton_for_", "triton_spl_",
                    "triton_unk_",
                    # CuPy's own kernels (its ufuncs and reductions are named `cupy_<op>`), and the CUB/Thrust/cuTENSOR/
                    # cuFFT code it calls: library compute, never the fast form's RawKernel/RawModule kernels.
                    "cupy_", "cub::", "thrust::", "cutensor", "cufft", "regular_fft", "vector_fft")
_INDUCTOR_PLAIN = "triton_"
"""Inductor's one name for all its kernels under `triton.unique_kernel_names=False`."""
# A Triton kernel's definition in Inductor's generated source (a kernel module, or the wrapper holding it as text).
_JIT_DEF = re.compile(r"@triton\.jit\s*\n\s*def\s+(\w+)\s*\(")


def quiet_compiler_threads() -> None:
    """`torch.compile` inside the candidate starts no thread of PyTorch's own that outlives forward, which the
    candidate's thread check (`background-threads`) would read as work escaping the timed calls: Inductor compiles in
    this process (`TORCHINDUCTOR_COMPILE_THREADS=1`: no compile-worker pool, whose reader thread `InductorSubproc`
    stays up), and tqdm, whose bars Dynamo and Inductor create, starts no monitor thread (the class PyTorch's compilers
    import, `torch.hub.tqdm`: tqdm's, or torch's stand-in when tqdm is not installed). Called before the worker counts
    its threads and before Inductor is imported; any thread the candidate starts is still counted."""
    os.environ["TORCHINDUCTOR_COMPILE_THREADS"] = "1"
    from torch.hub import tqdm

    tqdm.monitor_interval = 0


def inductor_kernel_names() -> frozenset[str]:
    """Names of the Triton kernels Inductor generated in this process: every `@triton.jit` definition in the modules
    its code cache loaded (`PyCodeCache`) and in the `torch._inductor` modules it registered. Empty when Inductor was
    never imported (nothing was compiled)."""
    codecache = sys.modules.get("torch._inductor.codecache")
    if codecache is None:
        return frozenset()
    cache = getattr(codecache, "PyCodeCache", None)
    modules = list(getattr(cache, "modules", []) or []) + list((getattr(cache, "modules_no_attr", {}) or {}).values())
    modules += [m for name, m in list(sys.modules.items()) if name.startswith("torch._inductor.runtime.compile_tasks.")]
    names: set[str] = set()
    seen: set[str] = set()
    for module in modules:
        path = getattr(module, "__file__", None)
        if not isinstance(path, str) or path in seen:
            continue
        seen.add(path)
        try:
            with open(path, encoding="utf-8") as f:
                names.update(_JIT_DEF.findall(f.read()))
        except (OSError, UnicodeDecodeError):
            continue
    return frozenset(names)


def is_library_kernel(name: str, generated: frozenset[str] = frozenset()) -> bool:
    """Library code: a library's kernel name, or a kernel `torch.compile` generated (`generated`, by provenance)."""
    if name == _INDUCTOR_PLAIN or name.split("(", 1)[0].strip() in generated:
        return True
    return any(m in name for m in _LIBRARY_MARKERS)


def kernel_census(fn, inputs: list) -> dict:
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn(*inputs)
        torch.cuda.synchronize()
    generated = inductor_kernel_names()  # after the forward: a first call compiles inside it
    kernels: dict[str, dict] = {}
    for ev in prof.events():
        if getattr(ev, "device_type", None) != torch.autograd.DeviceType.CUDA:
            continue
        k = kernels.setdefault(ev.name, {"name": ev.name, "calls": 0, "total_ms": 0.0,
                                         "custom": not is_library_kernel(ev.name, generated)})
        k["calls"] += 1
        k["total_ms"] += float(getattr(ev, "device_time", 0.0) or getattr(ev, "cuda_time", 0.0) or 0.0) / 1e3
    rows = sorted(kernels.values(), key=lambda r: -r["total_ms"])
    return {"kernels": rows, "custom": sum(r["calls"] for r in rows if r["custom"]),
            "library": sum(r["calls"] for r in rows if not r["custom"]),
            "compiled_by_torch": sorted(r["name"] for r in rows if r["name"] in generated)}
