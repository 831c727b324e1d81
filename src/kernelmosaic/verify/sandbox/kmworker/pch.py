"""A precompiled `torch/extension.h` for C++ `load_inline` builds: the worker's side (which header a build gets).

Parsing the torch headers is nearly all of a C++ extension's build time. After a plain build, the verifier's own
process precompiles the header with that build's compiler flags (`verify/pch_store.py`, into a store no worker can
write) and indexes it by what decides those flags; a later build with the same flags gets `-include <header>`. The header only
includes `torch/extension.h`, which `load_inline` already puts first in the source, so the program is the same;
and where GCC finds the precompiled form unusable it reads the header itself (`-Winvalid-pch` says so in the log).
Builds that opt out of the implicit include (`no_implicit_headers`) are never given it.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

__all__ = ["HEADER", "flags", "index_key", "is_index_key", "lookup"]

HEADER = "km_torch_extension.h"
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
    return header if header.with_name(HEADER + ".gch").is_file() else None
