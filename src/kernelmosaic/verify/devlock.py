"""One timing phase per device at a time, across every Verifier of a process and across processes.

Two verifiers that time on one GPU at once (the agent keeps one per precision) skew each other's numbers. The lock
is an `flock` on a file per device under the build cache (shared by every process that uses that cache), held only
around the timing phase (on CUDA, the whole judgement); compiles and the other devices go on meanwhile.

`shared=True` takes it as a reader: compute-sanitizer runs, whose kernels must not land in another candidate's
timing but may overlap each other (most of each run is starting Python and torch under the tool). A judgement
waits until every reader is done, and readers wait for a judgement; a reader arriving while a judgement waits can
still go first (`flock` is not fair), so a long stream of sanitizer runs delays judgements, never breaks them.
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
def timing_lock(cache_dir: Path, key: str, shared: bool = False) -> Iterator[float]:
    """Hold the device's timing lock (as one of several readers with `shared`); yields the seconds spent waiting."""
    path = lock_path(cache_dir, key)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _local:
        thread_lock = _by_path.setdefault(str(path), threading.Lock())
    started = time.perf_counter()
    # Exclusive holders of one process queue on the thread lock, processes on the flock; every holder opens the
    # file itself, so readers and writers of one process exclude each other through the flock too.
    with thread_lock if not shared else contextlib.nullcontext(), open(path, "a+") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        try:
            yield round(time.perf_counter() - started, 3)
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)
