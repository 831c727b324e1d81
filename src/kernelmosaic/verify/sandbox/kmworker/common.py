"""Small pieces shared by the worker roles: environment probe, error description, output packaging."""

from __future__ import annotations

import platform
import socket
import sys
import traceback

import torch

__all__ = ["probe_env", "describe_error", "package_outputs", "seed_all", "is_cuda_error"]

_CUDA_MARKERS = ("CUDA error", "illegal memory access", "device-side assert", "unspecified launch failure",
                 "misaligned address", "an illegal instruction", "CUBLAS_STATUS", "cudaError", "AcceleratorError")


def seed_all(seed: int) -> None:
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


def probe_env(device: str) -> dict:
    env = {
        "device": device,
        "torch": str(torch.__version__),
        "cuda": str(torch.version.cuda or ""),
        "python": platform.python_version(),
        "hostname": socket.gethostname(),
        "device_name": platform.processor() or platform.machine(),
        "capability": "",
        "l2_bytes": 0,
        "triton": "",
    }
    if device.startswith("cuda"):
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        env["device_name"] = props.name
        env["capability"] = f"{props.major}.{props.minor}"
        env["l2_bytes"] = int(getattr(props, "L2_cache_size", 0) or 0)
        env["sm_count"] = int(props.multi_processor_count)
        env["memory_bytes"] = int(props.total_memory)
        env["gpu_name"] = props.name
        uuid = str(getattr(props, "uuid", "") or "")
        env["gpu_uuid"] = uuid if not uuid or uuid.startswith("GPU-") else f"GPU-{uuid}"
    if "triton" in sys.modules:
        env["triton"] = str(getattr(sys.modules["triton"], "__version__", ""))
    return env


def is_cuda_error(exc: BaseException) -> bool:
    text = f"{type(exc).__name__}: {exc}"
    return any(m in text for m in _CUDA_MARKERS)


def describe_error(exc: BaseException) -> dict:
    oom = isinstance(exc, MemoryError) or "out of memory" in str(exc).lower() or "can't allocate memory" in str(exc).lower() \
        or "std::bad_alloc" in str(exc) or type(exc).__name__ == "OutOfMemoryError"
    return {
        "type": type(exc).__name__,
        "message": str(exc)[:4000],
        "traceback": "".join(traceback.format_exception(exc))[-8000:],
        "cuda": is_cuda_error(exc),
        "oom": bool(oom),
    }


def package_outputs(out) -> dict:
    """Describe the candidate's or reference's return value and copy its tensors to the host."""
    items = list(out) if isinstance(out, tuple) else [out]
    tensors, meta = [], []
    for x in items:
        if type(x) is not torch.Tensor:  # subclasses (lazy tensors, wrappers) are refused: exact type only
            meta.append({"type": type(x).__name__})
            tensors.append(torch.empty(0))
            continue
        meta.append({"type": "Tensor", "dtype": str(x.dtype).removeprefix("torch."), "shape": list(x.shape),
                     "device": x.device.type})
        tensors.append(x.detach().to("cpu", copy=True).contiguous())
    return {"tuple": isinstance(out, tuple), "meta": meta, "tensors": tensors}

