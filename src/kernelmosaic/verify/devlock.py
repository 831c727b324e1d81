"""One timing phase per device at a time, across every Verifier of a process and across processes.

Two verifiers that time on one GPU at once (the agent keeps one per precision) skew each other's numbers. The lock
is an `flock` on a file per device under the build cache (shared by every process that uses that cache), held only
around the timing phase; compiles, correctness runs and the other devices go on meanwhile.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import threading
import time
from collections.abc import Iterator
from pathlib import Path

__all__ = ["timing_lock", "lock_path"]

_local = threading.Lock()
_by_path: dict[str, threading.Lock] = {}


def lock_path(cache_dir: Path, key: str) -> Path:
    """The lock file of one device (`key`: its UUID where known, else its name, e.g. `cuda:0` or `cpu`)."""
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return Path(cache_dir) / "locks" / f"timing-{digest}.lock"


@contextlib.contextmanager
def timing_lock(cache_dir: Path, key: str) -> Iterator[float]:
    """Hold the device's timing lock; yields the seconds spent waiting for it."""
    path = lock_path(cache_dir, key)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _local:
        thread_lock = _by_path.setdefault(str(path), threading.Lock())
    started = time.perf_counter()
    with thread_lock, open(path, "a+") as f:  # threads of one process queue here, processes on the flock
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            yield round(time.perf_counter() - started, 3)
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)
