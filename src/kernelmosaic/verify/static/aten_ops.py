"""Which `at::`/`torch::` names in an extension's host code are ATen compute: the operators torch ships.

An ATen operator has a header of its own, `ATen/ops/<name>_ops.h`, in the torch include folder (read from the installed
package, without importing torch); its C++ functions are the name, its in-place form (`add_`), its out forms (`add_out`,
`add_outf`) and its `_symint` forms, also behind the functional namespaces (`torch::fft::fft` is the operator `fft_fft`).
Everything else under `at::` is ATen's utilities (shape arithmetic such as `at::infer_size`, thread queries such as
`at::get_thread_num`), which compute nothing on tensors, except in the namespaces whose functions compute without being
operators themselves (`COMPUTE_NAMESPACES`: native kernels and BLAS, autograd, the JIT, the dispatcher's `_ops`).
"""

from __future__ import annotations

import functools
import importlib.util
import os
from pathlib import Path

__all__ = ["COMPUTE_NAMESPACES", "operator_names", "names_operator"]

COMPUTE_NAMESPACES = frozenset({"native", "cpublas", "blas", "mkldnn", "autograd", "jit", "_ops", "functorch",
                                "optim", "sparse", "nested", "linalg", "fft", "special"})
_SUFFIXES = ("_symint", "_outf", "_out", "_")


@functools.lru_cache(maxsize=1)
def operator_names() -> frozenset[str] | None:
    """The ATen operators of the installed torch (None where its headers cannot be read: then every name counts as
    compute, as before this list existed)."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return None
    ops = Path(next(iter(spec.submodule_search_locations))) / "include" / "ATen" / "ops"
    try:
        names = frozenset(f[: -len("_ops.h")] for f in os.listdir(ops) if f.endswith("_ops.h"))
    except OSError:
        return None
    return names or None


def _is_operator(name: str, ops: frozenset[str]) -> bool:
    if name in ops:
        return True
    return any(name.endswith(s) and name[: -len(s)] in ops for s in _SUFFIXES)


def names_operator(parts: list[str], ops: frozenset[str]) -> bool:
    """Whether the qualified name `parts` (`["at", "sum"]`, `["torch", "fft", "fft"]`) reaches tensor compute: an
    operator, a function of a compute namespace, or a call through the dispatcher."""
    inner = parts[1:]
    if any(p in COMPUTE_NAMESPACES for p in inner):
        return True
    return any(_is_operator(p, ops) for p in inner) or any(_is_operator(f"{a}_{b}", ops)
                                                           for a, b in zip(inner, inner[1:], strict=False))
