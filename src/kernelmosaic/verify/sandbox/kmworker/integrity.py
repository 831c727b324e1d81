"""Snapshots of what a candidate must not change in its process: timers, sync, checkers and numerics flags.

Compared after import, after construction and after each phase; any difference is an `integrity_violation`.
Extra live threads after a phase are reported too: work that continues after `forward` returns escapes timing.
"""

from __future__ import annotations

import builtins
import threading
import time

import torch

__all__ = ["snapshot", "diff", "thread_count"]


def _watched() -> dict:
    import torch.testing

    items = {
        "time.perf_counter": time.perf_counter,
        "time.time": time.time,
        "time.monotonic": time.monotonic,
        "torch.allclose": torch.allclose,
        "torch.equal": torch.equal,
        "torch.isclose": torch.isclose,
        "torch.testing.assert_close": torch.testing.assert_close,
        "torch.Tensor.__eq__": torch.Tensor.__eq__,
        "torch.Tensor.clone": torch.Tensor.clone,
        "torch.Tensor.to": torch.Tensor.to,
        "torch.Tensor.copy_": torch.Tensor.copy_,
        "torch.Tensor.fill_": torch.Tensor.fill_,  # the timer's L2 flush
        "torch.manual_seed": torch.manual_seed,
        "torch.randn": torch.randn,
        "torch.rand": torch.rand,
        "torch.randint": torch.randint,
        "torch.nn.Module.__call__": torch.nn.Module.__call__,
        "builtins.isinstance": builtins.isinstance,
        "builtins.type": builtins.type,
        "builtins.len": builtins.len,
        "torch.cuda.synchronize": torch.cuda.synchronize,
        "torch.cuda.Event": torch.cuda.Event,
        "torch.cuda.Event.record": torch.cuda.Event.record,
        "torch.cuda.Event.elapsed_time": torch.cuda.Event.elapsed_time,
        "torch.cuda.Event.synchronize": torch.cuda.Event.synchronize,
        "torch.cuda.current_stream": torch.cuda.current_stream,
        "torch.cuda._sleep": torch.cuda._sleep,  # the timer's lead kernel
    }
    return {k: id(v) for k, v in items.items()}


def _flags() -> dict:
    b = torch.backends
    return {
        "cuda.matmul.allow_tf32": bool(b.cuda.matmul.allow_tf32),
        "cuda.matmul.allow_fp16_reduced_precision_reduction": bool(b.cuda.matmul.allow_fp16_reduced_precision_reduction),
        "cuda.matmul.allow_bf16_reduced_precision_reduction": bool(b.cuda.matmul.allow_bf16_reduced_precision_reduction),
        "cudnn.allow_tf32": bool(b.cudnn.allow_tf32),
        "cudnn.benchmark": bool(b.cudnn.benchmark),
        "cudnn.deterministic": bool(b.cudnn.deterministic),
        "float32_matmul_precision": torch.get_float32_matmul_precision(),
        "default_dtype": str(torch.get_default_dtype()),
        "grad_enabled": bool(torch.is_grad_enabled()),
    }


def snapshot() -> dict:
    return {"ids": _watched(), "flags": _flags()}


def diff(before: dict, after: dict | None = None) -> list[str]:
    """Human-readable differences between two snapshots (now, when `after` is omitted)."""
    after = after or snapshot()
    out = [f"{k} was replaced" for k, v in before["ids"].items() if after["ids"].get(k) != v]
    out += [f"{k} changed from {v!r} to {after['flags'][k]!r}" for k, v in before["flags"].items()
            if after["flags"].get(k) != v and k != "grad_enabled"]
    return out


def thread_count() -> int:
    return threading.active_count()
