"""Where the C functions behind the timer, the sync and the reply channel are reached from: for the verifier's
process to watch from outside (verify/got_watch.py), reported when the worker starts, before any candidate code runs.

A builtin function (`time.perf_counter`) is a PyCFunctionObject whose method table entry holds the C function;
native code that rewrites that entry (or the object's vectorcall slot) leaves every Python object the same, so the
worker's own integrity snapshot cannot see it. The same holds for a C type's method descriptor (`sendall` of the
reply's socket, CUDA event timing). Standard library only; CPython's object layouts (3.10-3.13, default build).
"""

from __future__ import annotations

import ctypes
import time

__all__ = ["watched_regions"]

_PTR = ctypes.sizeof(ctypes.c_void_p)


def _targets(device: str) -> dict[str, object]:
    import _socket

    out: dict[str, object] = {"time.perf_counter": time.perf_counter, "time.perf_counter_ns": time.perf_counter_ns,
                              "time.monotonic": time.monotonic, "time.time": time.time,
                              "socket.sendall": _socket.socket.sendall, "socket.recv_into": _socket.socket.recv_into}
    if device.startswith("cuda"):
        import torch

        base = getattr(torch._C, "_CudaEventBase", None)
        for name in ("elapsed_time", "record", "synchronize", "query"):
            if base is not None and hasattr(base, name):
                out[f"torch.cuda.Event.{name}"] = getattr(base, name)
        for name in ("_cuda_synchronize", "_cuda_getCurrentStream"):
            if hasattr(torch._C, name):
                out[f"torch._C.{name}"] = getattr(torch._C, name)
    return out


def _code_regions(label: str, code, out: list[list], depth: int = 0) -> None:
    """A code object's constants: the tuple's item pointers, each float's value, nested code objects' the same."""
    consts = code.co_consts
    if consts:
        out.append([f"{label} constants", id(consts) + _TUPLE_ITEMS, len(consts) * _PTR])
    for c in consts:
        if type(c) is float:
            out.append([f"{label} constant {c!r}", id(c) + 2 * _PTR, 8])
        elif hasattr(c, "co_consts") and depth < 3:
            _code_regions(f"{label}.<{c.co_name}>", c, out, depth + 1)


def _timer_code(out: list[list]) -> None:
    """The worker's timing, fingerprint and burst code: the constants its arithmetic uses (the ms scale, the
    bounds) and its functions' default arguments (red team 12 rewrote the timer's 1000.0 scale in place)."""
    import importlib

    for name in ("timing", "fingerprint", "burst_inputs"):
        try:
            module = importlib.import_module(f"{__package__}.{name}")
        except Exception:  # noqa: BLE001 - a module that cannot import here is not watched
            continue
        functions = [v for v in vars(module).values() if hasattr(v, "__code__")
                     and getattr(v, "__module__", "") == module.__name__]
        for cls in [v for v in vars(module).values() if isinstance(v, type) and v.__module__ == module.__name__]:
            members = [getattr(f, "__func__", f) for f in vars(cls).values()]  # static and class methods too
            functions += [f for f in members if hasattr(f, "__code__")]
        for f in functions:
            label = f"kmworker.{name}.{f.__qualname__}"
            _code_regions(label, f.__code__, out)
            if f.__defaults__:
                out.append([f"{label} defaults", id(f.__defaults__) + _TUPLE_ITEMS, len(f.__defaults__) * _PTR])


_TUPLE_ITEMS = 3 * _PTR
"""PyTupleObject: refcount, type, size, then the item pointers."""


def watched_regions(device: str) -> list[list]:
    """[label, address, bytes] of each target's fields that lead to its C function, of its method table entry, and
    of the worker's timer code's constants."""
    out: list[list] = []
    _timer_code(out)
    for label, obj in _targets(device).items():
        kind = type(obj).__name__
        if kind == "builtin_function_or_method":  # head | m_ml, m_self, m_module | weakreflist | vectorcall
            fields, ml_at = [(2 * _PTR, 3 * _PTR), (6 * _PTR, _PTR)], id(obj) + 2 * _PTR
        elif kind == "method_descriptor":  # head | d_type, d_name, d_qualname | d_method, vectorcall
            fields, ml_at = [(5 * _PTR, 2 * _PTR)], id(obj) + 5 * _PTR
        else:
            continue
        out += [[label, id(obj) + offset, size] for offset, size in fields]
        ml = ctypes.c_void_p.from_address(ml_at).value
        if ml:
            out.append([f"{label} (its method table entry)", ml, 3 * _PTR])  # ml_name, ml_meth, ml_flags
    return out
