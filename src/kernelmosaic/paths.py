"""Where the verifier's build cache and its service socket live. Standard library only: the `kernelmosaic`
entry point (`launch.py`) finds a running service with it before importing anything else."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["CONFIG_FILE", "PRIVATE_UMASK", "default_cache_dir", "private_dir", "socket_path"]

PRIVATE_UMASK = 0o077
"""Every `kernelmosaic` command creates its files 0600 and folders 0700: stores, caches, exports and reports hold
prompts, model output and verdicts, which are their owner's alone."""

CONFIG_FILE = "kernelmosaic.toml"
"""The settings file a command reads from its working directory when present (`kernelmosaic.config`)."""


def default_cache_dir() -> Path:
    """`$KERNELMOSAIC_CACHE`, else `~/.cache/kernelmosaic/build`."""
    env = os.environ.get("KERNELMOSAIC_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "kernelmosaic" / "build"


def private_dir(path: Path) -> Path:
    """`path` created with its missing parents, 0700; a folder that already exists keeps its mode."""
    path = Path(path)
    if not path.is_dir():
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        path.chmod(0o700)  # mkdir's mode is masked by the umask
    return path


def socket_path(cache_dir: Path) -> Path:
    """The local verifier service's socket for a build cache (one service per cache)."""
    return Path(cache_dir) / "verify.sock"
