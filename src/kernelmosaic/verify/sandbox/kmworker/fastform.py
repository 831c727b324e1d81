"""The fast form's door: launches of CuPy RawKernel/RawModule kernels, seen from inside the candidate worker.

Before a candidate that names CuPy is imported, `cupy.RawKernel` and `cupy.RawModule` are replaced by subclasses
whose launches go through the interceptor, so the probes count them and can replace their outputs with noise like
those of a `load_inline` function. A fast-form launch passes pointers, not tensors: while a probe runs, every tensor
an operator returns is recorded (a dispatch mode), and a pointer argument is mapped back to the recorded tensor that
starts at that address. cupy is imported only here, only for such a candidate.
"""

from __future__ import annotations

import contextlib

import torch

__all__ = ["watch_cupy", "tensors_from_pointers", "recording"]


def watch_cupy(interceptor) -> bool:
    """Route CuPy kernel launches through `interceptor.call_raw` (once per process); False without cupy."""
    try:
        import cupy
    except ImportError:
        return False
    if getattr(cupy.RawKernel, "km_watched", False):
        return True

    class RawKernel(cupy.RawKernel):
        km_watched = True

        def __call__(self, grid, block, args, **kwargs):
            return interceptor.call_raw(f"cupy.{self.name}", super().__call__, grid, block, args, kwargs)

    class Fetched:
        """A kernel of a RawModule: launches are watched, anything else goes to the kernel itself."""

        def __init__(self, kernel, name: str) -> None:
            object.__setattr__(self, "_kernel", kernel)
            object.__setattr__(self, "_name", name)

        def __call__(self, grid, block, args, **kwargs):
            return interceptor.call_raw(f"cupy.{self._name}", self._kernel, grid, block, args, kwargs)

        def __getattr__(self, attr):
            return getattr(self._kernel, attr)

        def __setattr__(self, attr, value):  # kernel attributes (max_dynamic_shared_size_bytes) are settable
            setattr(self._kernel, attr, value)

    class RawModule(cupy.RawModule):
        km_watched = True

        def get_function(self, name):
            return Fetched(super().get_function(name), name)

    cupy.RawKernel, cupy.RawModule = RawKernel, RawModule
    return True


def _address(arg) -> int | None:
    """The device address a kernel argument carries: a Python or NumPy integer, or a CuPy array's data pointer."""
    data = getattr(arg, "data", None)
    if data is not None and isinstance(getattr(data, "ptr", None), int):
        return data.ptr
    if isinstance(arg, int) and not isinstance(arg, bool):
        return arg
    if type(arg).__module__ == "numpy" and getattr(arg, "dtype", None) is not None and arg.dtype.kind in "iu":
        return int(arg)
    return None


def tensors_from_pointers(args, known: list[torch.Tensor]) -> list[torch.Tensor]:
    """The recorded tensors that start at an address passed in `args` (the largest one per address)."""
    by_ptr: dict[int, torch.Tensor] = {}
    for t in known:
        if t.numel():
            ptr = t.data_ptr()
            if ptr not in by_ptr or t.numel() > by_ptr[ptr].numel():
                by_ptr[ptr] = t
    out = []
    for a in args if isinstance(args, (tuple, list)) else [args]:
        ptr = _address(a)
        if ptr is not None and ptr in by_ptr and all(by_ptr[ptr] is not t for t in out):
            out.append(by_ptr[ptr])
    return out


@contextlib.contextmanager
def recording(known: list[torch.Tensor]):
    """Append every tensor an operator returns to `known` while inside."""
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_leaves

    class _Record(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            known.extend(t for t in tree_leaves(out) if isinstance(t, torch.Tensor))
            return out

    with _Record():
        yield
