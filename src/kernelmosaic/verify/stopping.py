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
from collections.abc import Callable, Iterator

__all__ = ["Stopped", "stop_requested", "request_stop", "stop_on_signal", "raise_if_stopped", "on_stop"]

_STOP = threading.Event()
_ON_STOP: list[Callable[[], object]] = []
"""What stopping ends besides new work: the worker pool registers its killer of every live worker tree."""


def on_stop(action: Callable[[], object]) -> None:
    """Run `action` whenever this process is told to stop (and again when a signal handler's block ends stopped)."""
    _ON_STOP.append(action)


def _run_on_stop() -> None:
    for action in list(_ON_STOP):
        action()


class Stopped(Exception):
    """A judgement cut short because this process is stopping: there is no verdict, and nothing may be recorded as
    one (a worker killed by the stop is not the candidate's crash)."""


def request_stop() -> None:
    """Stop this process's verifier work: no worker starts after this, and every live worker tree is killed."""
    _STOP.set()
    _run_on_stop()


def raise_if_stopped() -> None:
    """Raise `Stopped` when the process is stopping: called where a judgement would hand back a result."""
    if _STOP.is_set():
        raise Stopped("interrupted: this process is stopping")


def stop_requested() -> bool:
    """Whether this process was told to stop: no new work, no new worker."""
    return _STOP.is_set()


@contextlib.contextmanager
def stop_on_signal() -> Iterator[None]:
    """Handle SIGINT and SIGTERM as described above while the block runs (main thread only; elsewhere a no-op)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    hits = 0

    def handler(signum, frame) -> None:
        nonlocal hits
        hits += 1
        request_stop()
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
            _run_on_stop()  # any worker a thread started between the signal and here
