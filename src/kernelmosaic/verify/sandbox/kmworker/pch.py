"""A precompiled `torch/extension.h` for C++ `load_inline` builds, shared through the build cache.

Parsing the torch headers is nearly all of a C++ extension's build time. After a plain build, the header is
precompiled with that build's own compiler flags (read from its `build.ninja`, less the extension's name) and
indexed by what decides those flags; a later build with the same flags gets `-include <header>`. The header only
includes `torch/extension.h`, which `load_inline` already puts first in the source, so the program is the same;
and where GCC finds the precompiled form unusable it reads the header itself (`-Winvalid-pch` says so in the log).
Builds that opt out of the implicit include (`no_implicit_headers`) are never given it.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

__all__ = ["ensure", "flags", "index_key", "is_index_key", "lookup", "record"]

_HEADER = "km_torch_extension.h"
_KEY_LENGTH = 24


def flags(header: Path) -> list[str]:
    return ["-include", str(header), "-Winvalid-pch"]


def index_key(kwargs: dict) -> str | None:
    """What decides a build's C++ flags, or None when this build must not get the header."""
    import torch

    if kwargs.get("no_implicit_headers") or kwargs.get("use_pch"):
        return None
    material = {}
    for k in ("extra_cflags", "extra_include_paths"):
        v = kwargs.get(k)
        if v is not None and not (isinstance(v, (list, tuple)) and all(isinstance(x, str) for x in v)):
            return None
        material[k] = list(v or [])
    material["cuda"] = bool(kwargs.get("cuda_sources")) or bool(kwargs.get("with_cuda"))
    material["torch"], material["python"] = torch.__version__, sys.version.split()[0]
    material["cxx"] = os.environ.get("CXX", "c++")
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()[:_KEY_LENGTH]


def is_index_key(key: object) -> bool:
    """`key` has `index_key`'s form: an index file name, never a path (a key can come from a candidate's process)."""
    return isinstance(key, str) and len(key) == _KEY_LENGTH and all(c in "0123456789abcdef" for c in key)


def lookup(pch_dir: Path, key: str) -> Path | None:
    """The header recorded for `key`, when its precompiled form exists."""
    try:
        header = Path((pch_dir / "index" / key).read_text().strip())
    except OSError:
        return None
    return header if header.with_name(_HEADER + ".gch").is_file() else None


def record(pch_dir: Path, key: str, header: Path) -> None:
    (pch_dir / "index").mkdir(parents=True, exist_ok=True)
    tmp = pch_dir / "index" / f".{key}.{os.getpid()}"
    tmp.write_text(str(header))
    os.replace(tmp, pch_dir / "index" / key)


def _ninja_vars(ninja_file: Path) -> dict[str, str]:
    out = {}
    for line in ninja_file.read_text().splitlines():
        name, sep, value = line.partition(" = ")
        if sep and name in ("cxx", "cflags", "post_cflags"):
            out[name] = value
    return out


def ensure(pch_dir: Path, ninja_file: Path) -> Path:
    """The header precompiled with the C++ flags of the build described by `ninja_file` (built once per flag set,
    under a file lock, atomically). Raises `subprocess.CalledProcessError` or `OSError` when it cannot be built."""
    v = _ninja_vars(ninja_file)
    cflags = [f for f in shlex.split(v.get("cflags", "")) if not f.startswith("-DTORCH_EXTENSION_NAME=")]
    post = shlex.split(v.get("post_cflags", ""))
    cxx = shlex.split(v.get("cxx", "c++"))
    sig = hashlib.sha256(json.dumps([cxx, cflags, post]).encode()).hexdigest()[:24]
    folder = pch_dir / sig
    folder.mkdir(parents=True, exist_ok=True)
    header, gch = folder / _HEADER, folder / (_HEADER + ".gch")
    with open(folder / "lock", "a+") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        if not gch.is_file():
            header.write_text("#include <torch/extension.h>\n")
            tmp = folder / f".{os.getpid()}.gch"
            cmd = [*cxx, *cflags, "-x", "c++-header", str(header), "-o", str(tmp), *post]
            subprocess.run(cmd, check=True, capture_output=True, timeout=900)
            os.replace(tmp, gch)
    return header
