"""A kernel census of one forward pass: which GPU kernels ran, and which came from the candidate itself."""

from __future__ import annotations

import torch

__all__ = ["kernel_census", "is_library_kernel"]

# Kernel-name fragments of ATen, cuBLAS/cuBLASLt, cuDNN, CUTLASS-in-library and torch's own generated code.
_LIBRARY_MARKERS = ("at::native::", "at::cuda::", "void at::", "c10::", "cublas", "cublasLt", "cudnn", "sm90_xmma",
                    "sm80_xmma", "xmma_", "ampere_", "hopper_", "volta_", "turing_", "gemv2", "gemmk1", "splitKreduce",
                    "cutlass::Kernel", "nvjet", "CatArrayBatchedCopy", "Memcpy", "Memset", "triton_poi_", "triton_red_",
                    "triton_per_", "triton_tem_",
                    # CuPy's own kernels (its ufuncs and reductions are named `cupy_<op>`), and the CUB/Thrust/cuTENSOR/
                    # cuFFT code it calls: library compute, never the fast form's RawKernel/RawModule kernels.
                    "cupy_", "cub::", "thrust::", "cutensor", "cufft", "regular_fft", "vector_fft")


def is_library_kernel(name: str) -> bool:
    return any(m in name for m in _LIBRARY_MARKERS)


def kernel_census(fn, inputs: list) -> dict:
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn(*inputs)
        torch.cuda.synchronize()
    kernels: dict[str, dict] = {}
    for ev in prof.events():
        if getattr(ev, "device_type", None) != torch.autograd.DeviceType.CUDA:
            continue
        k = kernels.setdefault(ev.name, {"name": ev.name, "calls": 0, "total_ms": 0.0,
                                         "custom": not is_library_kernel(ev.name)})
        k["calls"] += 1
        k["total_ms"] += float(getattr(ev, "device_time", 0.0) or getattr(ev, "cuda_time", 0.0) or 0.0) / 1e3
    rows = sorted(kernels.values(), key=lambda r: -r["total_ms"])
    return {"kernels": rows, "custom": sum(r["calls"] for r in rows if r["custom"]),
            "library": sum(r["calls"] for r in rows if not r["custom"])}
