"""Ctrl-C and SIGTERM for the verifier's synchronous commands (`verify`, `verify-batch`, `verify-serve`).

The first signal stops the work: no worker starts after it (`Worker.spawn` raises `WorkerDied`), every live worker's
process tree is killed, so the threads blocked on them return at once instead of finishing a judgement nobody will
read, and `KeyboardInterrupt` is raised in the main thread for the command to say what was kept and exit 130. A
second signal exits 130 at once. Verdicts already written stay written; the same command resumes (docs/cli.md).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator

__all__ = ["stop_requested", "stop_on_signal"]

_STOP = threading.Event()


def stop_requested() -> bool:
    """Whether this process was told to stop: no new work, no new worker."""
    return _STOP.is_set()


@contextlib.contextmanager
def stop_on_signal() -> Iterator[None]:
    """Handle SIGINT and SIGTERM as described above while the block runs (main thread only; elsewhere a no-op)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    from kernelmosaic.verify.pool import kill_all_workers

    hits = 0

    def handler(signum, frame) -> None:
        nonlocal hits
        hits += 1
        _STOP.set()
        kill_all_workers()
        if hits > 1:
            os._exit(130)
        raise KeyboardInterrupt

    old = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, previous in old.items():
            signal.signal(sig, previous)
        if _STOP.is_set():
            kill_all_workers()  # any a thread started between the signal and here
