"""A candidate's CUDA unit compiled against the torch declarations it names, not all of torch. Standard library only.

`load_inline` puts `#include <torch/types.h>` at the top of every CUDA unit and most model-written kernels add
`<torch/extension.h>`: each of nvcc's front ends (the host preprocessor and compiler, cudafe++, cicc) then parses
~400k lines of torch, pybind11 and Python headers (13-14 s each on the H200 host, ~60 s for the unit on 2 cores),
while the unit itself uses a tensor type, a few factory functions, `TORCH_CHECK` and a dispatch macro.

`rewrite` returns the unit with those umbrella headers replaced by a lean prelude: ATen's `Tensor` (its methods, the
accessors, `TensorOptions`, the scalar types), the `AT_DISPATCH_*` macros, c10's checks, the per-operator header of
every ATen operator whose name appears in the source, and the `torch::` names for them (`using namespace at`, the
dtype aliases), which is what `torch/types.h` adds on top of ATen. A `#line` directive keeps every line number and
file name of the source as written. `nvcc_split` compiles the lean unit first; when it does not compile, the unit as
written is compiled and only its output is reported, so a build never fails, and never prints a diagnostic, because
of the prelude. A lean prelude declares a subset of what the umbrella headers declare; the differences it can make
to an object that compiles are documented in docs/threat-model.md (builds).

Units the prelude cannot serve are left as written (`rewrite` returns None): no umbrella include, pybind11 or
`TORCH_LIBRARY` registrations, torch's C++ frontend namespaces (`torch::nn`, `torch::autograd`, ...), and any mention
of `requires_grad` (torch's own factory functions honour it; ATen's, which the prelude's `torch::` names resolve to,
produce the same tensors otherwise).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["SWITCH", "SUFFIX", "BINDING_HEAD", "binding_header", "rewrite", "lean_args", "lean_source", "log_path",
           "keep_log", "line_directive", "torch_ops"]

SWITCH = "KM_NVCC_LEAN"
"""`0`: compile every unit as written."""
SUFFIX = ".km-lean.cu"
"""The lean unit is written beside the source as `<stem>.km-lean.cu`."""

UMBRELLAS = frozenset({"torch/types.h", "torch/extension.h", "torch/torch.h", "torch/all.h", "ATen/ATen.h"})
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"]+)[>"][^\n]*$', re.M)
_FULL_ONLY = re.compile(r"PYBIND11_|pybind11|torch/python\.h|TORCH_LIBRARY|requires_grad|"
                        r"\btorch::(?:nn|optim|autograd|jit|data|serialize|python|cuda|fft|linalg|special|nested|"
                        r"sparse|indexing)\b")
_WORD = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")
_BINDING_FULL_ONLY = re.compile(r"torch/python\.h|TORCH_LIBRARY|requires_grad|"
                                r"\btorch::(?:nn|optim|autograd|jit|data|serialize|python|cuda|fft|linalg|special|"
                                r"nested|sparse|indexing)\b")
_PRELUDE_HEAD = """#include <ATen/core/Tensor.h>
#include <ATen/Dispatch.h>
#include <c10/util/Exception.h>
#include <c10/core/ScalarType.h>
#include <optional>
"""
BINDING_HEAD = """#include <torch/csrc/utils/pybind.h>
#include <torch/csrc/Exceptions.h>
"""
"""What a binding unit (`load_inline`'s `main.cpp`: the C++ sources and the pybind11 module) needs beyond the prelude:
pybind11 with every type caster torch's umbrella header brings (tensors, dtypes, devices, the STL: the pybind11
headers included are the same set) and `torch::wrap_pybind_function`."""
_TORCH_NAMES = """namespace torch {
using namespace at;
using std::nullopt;
using std::optional;
using Dtype = at::ScalarType;
inline constexpr auto kUInt8 = at::kByte, kInt8 = at::kChar, kInt16 = at::kShort, kInt32 = at::kInt, kInt64 = at::kLong;
inline constexpr auto kUInt16 = at::kUInt16, kUInt32 = at::kUInt32, kUInt64 = at::kUInt64;
inline constexpr auto kFloat16 = at::kHalf, kFloat32 = at::kFloat, kFloat64 = at::kDouble;
inline constexpr auto kU8 = kUInt8, kU16 = kUInt16, kU32 = kUInt32, kU64 = kUInt64;
inline constexpr auto kI8 = kInt8, kI16 = kInt16, kI32 = kInt32, kI64 = kInt64;
inline constexpr auto kF16 = kFloat16, kF32 = kFloat32, kF64 = kFloat64;
}  // namespace torch
"""
_NAMED = {
    "NoGradGuard": ("ATen/core/grad_mode.h", "namespace torch { using NoGradGuard = at::NoGradGuard; }"),
    "AutoGradMode": ("ATen/core/grad_mode.h", "namespace torch { using AutoGradMode = at::AutoGradMode; }"),
    "parallel_for": ("ATen/Parallel.h", ""),
    "parallel_reduce": ("ATen/Parallel.h", ""),
    "get_num_threads": ("ATen/Parallel.h", "namespace torch { using at::get_num_threads; }"),
    "irange": ("c10/util/irange.h", ""),
}
"""Names the prelude leaves out that model-written units use, with the header that declares each (and the `torch::`
name `torch/types.h` or `torch/utils.h` gives it)."""


_BINDING_OPERATORS = """#ifndef AT_PER_OPERATOR_HEADERS
#define AT_PER_OPERATOR_HEADERS
#include <ATen/TensorOperators.h>
#undef AT_PER_OPERATOR_HEADERS
#else
#include <ATen/TensorOperators.h>
#endif
"""
"""Tensor arithmetic in host code (`x - mean`, `var * 0.5`, `a < b`): ATen's operator overloads, without the header of
every operator it would include otherwise. Host code of a C++ extension does this often; without it such a unit
compiled as written (~25 s on two cores instead of ~5). Binding units only: it costs ~3 s to parse, paid once in the
binding unit's precompiled header where the verifier made one, and by every binding unit where it did not."""


def binding_header() -> str:
    """The headers every lean binding unit starts with: what its precompiled header holds (`verify/pch_store.py`)."""
    return BINDING_HEAD + _PRELUDE_HEAD + _BINDING_OPERATORS


def rewrite(source: str, ops: frozenset[str] | set[str], name: str, binding: bool = False) -> str | None:
    """`source` (the unit as written, file `name`) with its umbrella torch includes replaced by the lean prelude;
    `ops` are the ATen operators that have their own header (`ATen/ops/<op>.h`). `binding`: a C++ unit with a pybind11
    module (`BINDING_HEAD` first). None where the prelude cannot serve the unit."""
    if (_BINDING_FULL_ONLY if binding else _FULL_ONLY).search(source):
        return None
    found = False

    def blank(m: re.Match) -> str:
        nonlocal found
        if m.group(1) not in UMBRELLAS:
            return m.group(0)
        found = True
        return ""  # the line stays, empty: the numbering of the rest is unchanged

    body = _INCLUDE.sub(blank, source)
    if not found:
        return None
    used = sorted(w for w in set(_WORD.findall(source)) if w in ops)
    named = [_NAMED[w] for w in sorted(set(_WORD.findall(source)) & _NAMED.keys())]
    headers = "".join(f"#include <{h}>\n" for h in dict.fromkeys(h for h, _ in named))
    aliases = "".join(f"{a}\n" for a in dict.fromkeys(a for _, a in named if a))
    prelude = ((binding_header() if binding else _PRELUDE_HEAD) + headers + "".join(f"#include <ATen/ops/{op}.h>\n" for op in used) + _TORCH_NAMES
               + aliases)
    return f"{prelude}{line_directive(1, name)}{body}"


def lean_args(args: list[str]) -> list[str] | None:
    """nvcc's arguments with the unit's source replaced by its lean form (written beside it), or None when there is
    none: not one `.cu` source, no torch include folder among `-I`/`-isystem`, or a unit `rewrite` leaves alone."""
    sources = [i for i, a in enumerate(args) if a.endswith(".cu") and not a.startswith("-")]
    return lean_source(args, sources[0], SUFFIX) if len(sources) == 1 else None


def lean_source(args: list[str], at: int, suffix: str, binding: bool = False) -> list[str] | None:
    """Compiler arguments whose source, `args[at]`, is replaced by its lean form (`rewrite`), written beside it as
    `<stem><suffix>`; None when there is none (no torch include folder among the arguments, an unreadable source,
    a unit `rewrite` leaves alone, an unwritable folder)."""
    where = Path(args[at])
    ops = torch_ops(args)
    if ops is None:
        return None
    try:
        text = where.read_text()
    except (OSError, UnicodeDecodeError):
        return None
    lean = rewrite(text, ops, str(where), binding=binding)
    if lean is None:
        return None
    target = where.with_name(where.name.rsplit(".", 1)[0] + suffix)
    try:
        tmp = target.with_name(f".{target.name}.{os.getpid()}")
        tmp.write_text(lean)
        os.replace(tmp, target)
    except OSError:
        return None
    out = list(args)
    out[at] = str(target)
    return out


def log_path(args: list[str], suffix: str = SUFFIX) -> Path | None:
    """Where the lean unit named in `args` (a source ending in `suffix`) keeps the output of a compile that failed
    (`<stem>.km-lean.log`)."""
    for a in args:
        if a.endswith(suffix) and not a.startswith("-"):
            return Path(a).with_suffix(".log")
    return None


def keep_log(path: Path | None, text: bytes) -> None:
    """The end of a failed compile's output, kept at `path` for a reader (the build reports another compile's)."""
    if path is not None:
        try:
            path.write_bytes(text[-20_000:])
        except OSError:
            pass


def torch_ops(args: list[str]) -> frozenset[str] | None:
    """The operators with a header in the torch include folder named by the arguments."""
    for folder in _include_dirs(args):
        ops = Path(folder) / "ATen" / "ops"
        if (Path(folder) / "ATen" / "core" / "Tensor.h").is_file() and ops.is_dir():
            try:
                return frozenset(f[:-2] for f in os.listdir(ops) if f.endswith(".h"))
            except OSError:
                return None
    return None


def _include_dirs(args: list[str]) -> list[str]:
    out: list[str] = []
    for i, a in enumerate(args):
        for flag in ("-isystem", "-I", "--include-path"):
            if a == flag and i + 1 < len(args):
                out.append(args[i + 1])
            elif a.startswith(flag) and len(a) > len(flag):
                out.append(a[len(flag):].lstrip("="))
    return out


def line_directive(line: int, name: str) -> str:
    """`#line <line> "<name>"` and a newline: what follows is reported as that line of that file."""
    escaped = name.replace("\\", "\\\\").replace('"', '\\"')
    return f'#line {line} "{escaped}"\n'
