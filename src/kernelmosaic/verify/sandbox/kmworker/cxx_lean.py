"""The C++ compiler torch's ninja runs for a candidate's extension (`CXX` is `km-cxx` beside this file, set by
`loader.BuildRecorder`): the binding unit compiled lean first. Standard library only.

`load_inline` writes one C++ unit, `main.cpp`: `#include <torch/extension.h>`, the candidate's C++ sources and the
pybind11 module that binds its functions. torch's umbrella header makes that unit cost ~11 s even with torch's header
precompiled (two cores: GCC instantiates and emits what the header's inline code uses, ~10 s for an empty unit), while
a CUDA extension's C++ sources are declarations. So the unit is first compiled with the umbrella replaced by the lean
prelude (`lean_unit.rewrite(binding=True)`: pybind11 and torch's type casters, ATen's tensor, the operators the source
names; the pybind11 headers are the same set as the umbrella's, so every argument converts as before), with the lean
prelude's own precompiled header where the verifier made one (`km_torch_binding.h` beside the precompiled
`km_torch_extension.h` the build was given). When that does not compile, the unit as written is compiled with the
build's own arguments and only its output is reported: a build never fails, and never prints a diagnostic, because of
the prelude (why the lean one failed is kept beside it, `<stem>.km-lean.log`). Anything but a single-source compile
(links, `-v`, `-dumpversion`) runs the real compiler unchanged, so torch's compiler checks see the real one.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

if __package__:
    from . import lean_unit
else:  # run by torch's ninja through km-cxx as `python -I cxx_lean.py`
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import lean_unit

__all__ = ["SWITCH", "REAL_CXX", "WRAPPER", "LEAN_SUFFIX", "BINDING_HEADER", "lean_args", "main"]

SWITCH = "KM_CXX_LEAN"
"""`0`: compile every C++ unit as written."""
REAL_CXX = "KM_REAL_CXX"
"""The compiler this stands in for (the `CXX` torch would have used; `c++` when unset)."""
WRAPPER = Path(__file__).with_name("km-cxx")
"""The executable torch's build file names as its compiler."""
LEAN_SUFFIX = ".km-lean.cpp"
BINDING_HEADER = "km_torch_binding.h"
"""The lean binding prelude's precompiled header, written beside the precompiled torch header (`pch.HEADER`)."""
_SOURCES = (".cpp", ".cc", ".cxx", ".C")


def lean_args(args: list[str]) -> list[str] | None:
    """The compiler's arguments with the unit replaced by its lean binding form (written beside it) and the build's
    precompiled torch header by the lean one (dropped where there is none), or None when there is no lean form:
    not a compile of one C++ source, no torch include folder among the arguments, or a unit the prelude leaves alone."""
    if "-c" not in args:
        return None
    sources = [i for i, a in enumerate(args) if a.endswith(_SOURCES) and not a.startswith("-")]
    if len(sources) != 1:
        return None
    out = lean_unit.lean_source(args, sources[0], LEAN_SUFFIX, binding=True)
    return _header_swapped(out) if out is not None else None


def _header_swapped(args: list[str]) -> list[str]:
    """`-include <dir>/km_torch_extension.h` becomes `-include <dir>/km_torch_binding.h` where that is precompiled,
    and goes otherwise (its precompiled form would be unusable: the lean unit does not start with it)."""
    out: list[str] = []
    skip = False
    for i, a in enumerate(args):
        if skip:
            skip = False
            continue
        if a == "-include" and i + 1 < len(args) and Path(args[i + 1]).name == "km_torch_extension.h":
            lean = Path(args[i + 1]).with_name(BINDING_HEADER)
            if lean.with_name(BINDING_HEADER + ".gch").is_file():
                out += ["-include", str(lean)]
            skip = True
            continue
        out.append(a)
    return out


def main(argv: list[str]) -> int:
    real = os.environ.get(REAL_CXX) or "c++"
    lean = lean_args(argv) if os.environ.get(SWITCH, "1") != "0" else None
    if lean is not None:
        done = subprocess.run([real, *lean], capture_output=True)
        if done.returncode == 0:
            sys.stdout.buffer.write(done.stdout)
            sys.stderr.buffer.write(done.stderr)
            return 0
        lean_unit.keep_log(lean_unit.log_path(lean, LEAN_SUFFIX), done.stdout + done.stderr)
    os.execvp(real, [real, *argv])
    return 1  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
