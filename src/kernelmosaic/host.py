"""Facts of the host every stage sizes its work by."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

__all__ = ["host_memory_gib"]


def host_memory_gib() -> float:
    """This host's memory (`os.sysconf`), or the cgroup's limit when a container has a lower one."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    with contextlib.suppress(OSError, ValueError):
        total = min(total, int(Path("/sys/fs/cgroup/memory.max").read_text().strip()))  # "max" when unlimited
    return total / 2**30
