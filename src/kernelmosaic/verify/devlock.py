"""One timing phase per device at a time, across every Verifier of a process and across processes.

Two verifiers that time on one GPU at once (the agent keeps one per precision) skew each other's numbers. The lock
is an `flock` on a file per device under the build cache (shared by every process that uses that cache), held only
around the timing phase (on CUDA, the whole judgement); compiles and the other devices go on meanwhile.

`shared=True` takes it as a reader: compute-sanitizer runs, whose kernels must not land in another candidate's
timing but may overlap each other (most of each run is starting Python and torch under the tool). A judgement
waits until every reader is done, and readers wait for a judgement; a reader arriving while a judgement waits can
still go first (`flock` is not fair), so a long stream of sanitizer runs delays judgements, never breaks them.

Within one process, `judgements_first(key)` orders the two: a sanitizer run waits while any judgement of that
device is pending (waiting for the device or holding it). Without it a batch alternates one judgement and one
sanitizer run, each excluding the other (measured on the H200, 2026-12-01: about 60 s a candidate in evaluation);
with it the sanitizer runs of the threads that finished judging start together, side by side, once no judgement
waits, so their tool start-ups overlap each other instead of the judgements.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import threading
import time
from collections.abc import Iterator
from pathlib import Path

__all__ = ["timing_lock", "lock_path", "JudgementsFirst", "judgements_first"]

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


class JudgementsFirst:
    """Judgements before sanitizer runs, in one process: `judgement()` marks one pending from before it asks for
    the device until it lets it go; `wait_turn()` blocks a sanitizer run until none is pending (at most
    `max_wait_s`, so a steady stream of judgements from other clients delays a sanitizer run, never starves it)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._pending = 0

    @property
    def pending(self) -> int:
        with self._cond:
            return self._pending

    @contextlib.contextmanager
    def judgement(self) -> Iterator[None]:
        with self._cond:
            self._pending += 1
        try:
            yield
        finally:
            with self._cond:
                self._pending -= 1
                self._cond.notify_all()

    def wait_turn(self, max_wait_s: float) -> float:
        """Wait until no judgement is pending; returns the seconds waited."""
        started = time.perf_counter()
        with self._cond:
            self._cond.wait_for(lambda: self._pending == 0, timeout=max_wait_s)
        return round(time.perf_counter() - started, 3)


_gates: dict[str, JudgementsFirst] = {}


def judgements_first(key: str) -> JudgementsFirst:
    """The process-wide gate of one device (`key` as for `timing_lock`): every Verifier of the process shares it."""
    with _local:
        return _gates.setdefault(key, JudgementsFirst())
