"""The precompiled torch headers, made by the verifier's own process (never a worker: workers run candidate code).

After a plain C++ build of a flag set (on the CPU device its second, `second_sighting`: there the header is made
before the verdict returns and costs about four builds), the compile stage asks for the torch header precompiled
with that build's flags (`kmworker.pch`: later builds with the same flags get `-include <header>`). The flags are read from the
build's `build.ninja`, a file in the build cache, which the candidate's process could rewrite first: so every flag
must be one that `load_inline` itself writes or a plain optimisation or language choice (`_safe`), the compiler must
be the one torch would call (or the verifier's own wrapper of it, `kmworker/km-cxx`), and the header holds one line,
`#include <torch/extension.h>`; beside it the lean binding prelude is precompiled with the same flags
(`cxx_lean.BINDING_HEADER`, the fixed text of `lean_unit.binding_header`). A build file that asks
for anything else (`-include`, `-fplugin=`, `-B`, an include folder of its own, another compiler) gets no header; its
builds stay plain. What a later build receives is therefore torch's header compiled with flags of a known set: at
worst (flags that do not match its own) GCC finds it unusable and reads the header itself (`-Winvalid-pch`).

The headers live in `paths.pch_dir` (one store per user, outside the build cache, 0700), indexed by the key the
worker computed from its build's arguments (`kmworker.pch.index_key`).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shlex
import subprocess
import sysconfig
from functools import cache
from pathlib import Path

from kernelmosaic.paths import private_dir, write_atomic
from kernelmosaic.verify.sandbox.kmworker import cxx_lean, lean_unit, pch

__all__ = ["UnsafeFlags", "header_flags", "precompile", "second_sighting"]

# Code-generation flags only (optimisation, the target's instruction sets, OpenMP, the math model): models pass
# `-O3 -march=native -mavx2 -mfma -ffast-math -fopenmp` as often as not, and none of these reads a file or defines a
# macro of the candidate's choosing. A header is made per flag set, so its predefined macros (__AVX2__,
# __FAST_MATH__) are the build's own.
_SIMPLE = re.compile(r"-(O[0-3sg]?|Ofast|fPIC|fpic|g|g[0-3]|w|Wall|Wextra|Wno-[a-z0-9-]+|std=(c|gnu)\+\+[0-9a-z]+|"
                     r"fopenmp|fopenmp-simd|ffast-math|funroll-loops|ftree-vectorize|fomit-frame-pointer|"
                     r"fno-math-errno|fno-trapping-math|ffp-contract=(fast|on|off)|f(no-)?strict-aliasing|"
                     r"march=[a-z0-9-]+|mtune=[a-z0-9-]+|"
                     r"m(avx|avx2|avx512[a-z0-9]*|fma|f16c|bmi2?|popcnt|lzcnt|sse[234]|sse4\.[12]|ssse3)|"
                     r"DNDEBUG|pthread|"
                     r"D_GLIBCXX_USE_CXX11_ABI=[01]|DTORCH_API_INCLUDE_EXTENSION_H|DWITH_CUDA|"
                     r"DPYBIND11_[A-Z_]+=[\"\\A-Za-z0-9_]*)")


class UnsafeFlags(ValueError):
    """A build file whose flags are not all of the known set: no header is made from it."""


@cache
def _include_folders() -> frozenset[str]:
    """The folders `load_inline` itself passes with `-isystem`: torch's, Python's and CUDA's headers."""
    from torch.utils import cpp_extension

    folders = set(cpp_extension.include_paths())
    try:
        folders |= set(cpp_extension.include_paths("cuda"))
    except (TypeError, OSError, RuntimeError):  # older signature, or no CUDA toolkit here
        pass
    folders |= {p for p in (sysconfig.get_path("include"), sysconfig.get_path("platinclude")) if p}
    home = getattr(cpp_extension, "CUDA_HOME", None)
    if home:
        folders.add(os.path.join(home, "include"))
    return frozenset(os.path.realpath(f) for f in folders)


def _safe(flags: list[str]) -> None:
    folders = _include_folders()
    i = 0
    while i < len(flags):
        flag = flags[i]
        if flag in ("-isystem", "-I") and i + 1 < len(flags) and os.path.realpath(flags[i + 1]) in folders:
            i += 2
            continue
        if flag.startswith("-I") and os.path.realpath(flag[2:]) in folders:
            i += 1
            continue
        if not _SIMPLE.fullmatch(flag):
            raise UnsafeFlags(f"flag {flag!r} is not one a header is made with")
        i += 1


def header_flags(ninja_file: Path) -> tuple[list[str], list[str], list[str]]:
    """(compiler, flags, flags after the source) of the C++ build `ninja_file` describes, less the extension's name;
    raises `UnsafeFlags` when any of them is outside the known set, OSError when the file cannot be read."""
    found: dict[str, str] = {}
    for line in ninja_file.read_text().splitlines():
        name, sep, value = line.partition(" = ")
        if sep and name in ("cxx", "cflags", "post_cflags"):
            found[name] = value
    cxx = shlex.split(found.get("cxx", "c++"))
    if cxx == [str(cxx_lean.WRAPPER)]:  # the verifier's own wrapper (cxx_lean.py) stands for the compiler torch calls
        cxx = shlex.split(os.environ.get("CXX", "c++"))
    elif cxx != shlex.split(os.environ.get("CXX", "c++")):
        raise UnsafeFlags(f"compiler {cxx!r} is not the one torch calls here")
    cflags = [f for f in shlex.split(found.get("cflags", "")) if not f.startswith("-DTORCH_EXTENSION_NAME=")]
    post = shlex.split(found.get("post_cflags", ""))
    _safe(cflags)
    _safe(post)
    return cxx, cflags, post


def _text(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def second_sighting(store: Path, key: str) -> bool:
    """Whether a plain build with the flags indexed as `key` was reported here before (by any process of this user:
    the record lies in the store); records this one when it was not. A header already indexed under `key` counts as
    seen."""
    if not pch.is_index_key(key):
        raise UnsafeFlags(f"{key[:40]!r} is no header index key")
    if (store / "index" / key).is_file():
        return True
    seen = private_dir(store / "seen") / key
    try:
        with open(seen, "x"):
            return False
    except FileExistsError:
        return True


def precompile(store: Path, key: str, ninja_file: Path, nice: int = 0) -> Path:
    """The header precompiled with the flags of the build `ninja_file` describes (once per flag set, under a file
    lock, atomically) and indexed under `key`, and beside it the lean binding prelude's (`cxx_lean.BINDING_HEADER`,
    fixed text: `lean_unit.binding_header`); the compiler runs at niceness `nice`. Raises `UnsafeFlags`,
    `subprocess.CalledProcessError` or `OSError`."""
    if not pch.is_index_key(key):
        raise UnsafeFlags(f"{key[:40]!r} is no header index key")
    cxx, cflags, post = header_flags(ninja_file)
    sig = hashlib.sha256(json.dumps([cxx, cflags, post]).encode()).hexdigest()[:24]
    folder = private_dir(store / sig)
    header = folder / pch.HEADER
    with open(folder / "lock", "a+") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        for name, text in ((pch.HEADER, "#include <torch/extension.h>\n"),
                           (cxx_lean.BINDING_HEADER, lean_unit.binding_header())):
            if (folder / (name + ".gch")).is_file() and _text(folder / name) == text:
                continue  # (a header whose text changed with the verifier is made again)
            (folder / name).write_text(text)
            tmp = folder / f".{os.getpid()}.gch"
            cmd = [*(["nice", "-n", str(nice)] if nice > 0 else []), *cxx, *cflags, "-x", "c++-header",
                   str(folder / name), "-o", str(tmp), *post]
            subprocess.run(cmd, check=True, capture_output=True, timeout=900, cwd=folder)
            os.replace(tmp, folder / (name + ".gch"))
    index = private_dir(store / "index")
    write_atomic(index / key, str(header))  # (threads of one verifier may index one key at once)
    return header
