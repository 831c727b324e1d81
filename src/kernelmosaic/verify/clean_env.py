"""The environment a process that runs candidate code starts with: an allowlist, never the caller's whole environment.

Candidate code can read its own environment (and that of any sibling process it can see), and whatever it prints
reaches the verdict, the model's next prompt, the store and the SFT export. So only what the toolchain and torch
need goes in: locale, paths, compilers, CUDA/Triton/Inductor settings and the threading knobs. A name that looks
like a credential (`*KEY*`, `*TOKEN*`, `*SECRET*`, ...) is dropped even when its prefix is allowed, and so is a value
that carries credentials in a URL (`scheme://user:password@host`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

__all__ = ["ALLOWED_NAMES", "ALLOWED_PREFIXES", "allowed", "clean_env"]

ALLOWED_NAMES = frozenset({
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TERM", "SHELL",
    "LD_LIBRARY_PATH", "LIBRARY_PATH", "CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH",
    "CC", "CXX", "CFLAGS", "CXXFLAGS", "LDFLAGS", "CUDAHOSTCXX", "MAX_JOBS",
    "PYTHONPATH", "PYTHONHASHSEED", "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "PYTHONFAULTHANDLER",
    "XDG_CACHE_HOME", "SOURCE_DATE_EPOCH",
})
"""Exact names passed through."""

ALLOWED_PREFIXES = ("LC_", "CUDA_", "NVIDIA_", "NVCC_", "TORCH_", "TORCHINDUCTOR_", "TRITON_", "PYTORCH_", "CUPY_",
                    "OMP_", "MKL_", "KMP_", "GOMP_", "OPENBLAS_", "KM_")
"""Families passed through: the toolchain's and torch's own settings, and the worker protocol's (`KM_`)."""

_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|SESSION", re.IGNORECASE)
_URL_CREDENTIALS = re.compile(r"[a-z][a-z0-9+.-]*://[^/\s:@]+:[^/\s@]+@", re.IGNORECASE)


def allowed(name: str, value: str) -> bool:
    """Whether `name=value` may reach a process that runs candidate code."""
    if _SECRET_NAME.search(name) or _URL_CREDENTIALS.search(value):
        return False
    return name in ALLOWED_NAMES or name.startswith(ALLOWED_PREFIXES)


def clean_env(source: Mapping[str, str] | None = None, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The allowed part of `source` (this process's environment by default) plus `extra`, which the verifier sets
    itself and is taken as given."""
    base = os.environ if source is None else source
    return {**{k: v for k, v in base.items() if allowed(k, v)}, **(extra or {})}
