"""Snapshots of what a candidate must not change in its process: timers, sync, checkers and numerics flags.

Compared after import, after construction and after each phase; any difference is an `integrity_violation`.
Extra live threads after a phase are reported too: work that continues after `forward` returns escapes timing.
"""

from __future__ import annotations

import builtins
import statistics
import sys
import threading
import time
import types

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
        "torch.cuda.Stream.synchronize": torch.cuda.Stream.synchronize,
        "torch.dot": torch.dot,  # fingerprints
        "torch.Generator.manual_seed": torch.Generator.manual_seed,
        "statistics.median_high": statistics.median_high,
    }
    return {**{k: id(v) for k, v in items.items()}, **_worker_modules()}


_MUTABLE = {"kmworker.loader._counter"}
"""Worker globals that change on their own (a module counter)."""


def _worker_modules() -> dict:
    """The worker's own code, as the timer, checker and protocol use it: every global of every `kmworker` module
    (functions, classes, module references by identity; numbers and strings by value) and every attribute of the
    classes they define. A candidate that rebinds `kmworker.timing.time` or `Timer.one` changes this."""
    out: dict = {}
    for name, module in list(sys.modules.items()):
        if not (name == "kmworker" or name.startswith("kmworker.")) or not isinstance(module, types.ModuleType):
            continue
        out[name] = id(module)
        for attr, value in list(vars(module).items()):
            key = f"{name}.{attr}"
            if attr.startswith("__") or key in _MUTABLE:
                continue
            out[key] = repr(value) if isinstance(value, (int, float, str, bytes, bool, type(None))) else id(value)
            if isinstance(value, type) and getattr(value, "__module__", "") == name:
                out.update({f"{key}.{a}": id(v) for a, v in vars(value).items() if not a.startswith("__")})
    return out


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
    out += [f"{k} was added" for k in after["ids"].keys() - before["ids"].keys() if k.startswith("kmworker.")
            and k.rsplit(".", 1)[0] in before["ids"]]
    out += [f"{k} changed from {v!r} to {after['flags'][k]!r}" for k, v in before["flags"].items()
            if after["flags"].get(k) != v and k != "grad_enabled"]
    return out


def thread_count() -> int:
    return threading.active_count()
