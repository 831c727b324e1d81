"""Where the verifier's build cache and its service socket live. Standard library only: the `kernelmosaic`
entry point (`launch.py`) finds a running service with it before importing anything else."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["CONFIG_FILE", "default_cache_dir", "socket_path"]

CONFIG_FILE = "kernelmosaic.toml"
"""The settings file a command reads from its working directory when present (`kernelmosaic.config`)."""


def default_cache_dir() -> Path:
    """`$KERNELMOSAIC_CACHE`, else `~/.cache/kernelmosaic/build`."""
    env = os.environ.get("KERNELMOSAIC_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "kernelmosaic" / "build"


def socket_path(cache_dir: Path) -> Path:
    """The local verifier service's socket for a build cache (one service per cache)."""
    return Path(cache_dir) / "verify.sock"
