"""Ctrl-C for a generate run: the first one stops it within seconds, the second forces the exit at once.

The first interrupt cancels every episode at its current await (each committed step stays committed; a cut step
is completed on resume), then kills the verifier's worker processes so the threads blocked on them return instead
of running a judgement nobody will read. Nothing is recorded from a cancelled call.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["Interrupted", "run_interruptibly"]

T = TypeVar("T")


class Interrupted(Exception):
    """The run was stopped by Ctrl-C (or SIGTERM); its episodes resume with `--resume`."""


async def run_interruptibly(work: Coroutine[Any, Any, T], on_interrupt: Callable[[], None],
                            on_force: Callable[[], None] | None = None) -> T:
    """Await `work`; on the first SIGINT/SIGTERM cancel it and call `on_interrupt`, on the second exit with 130."""
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(work)
    hits = 0

    def interrupt() -> None:
        nonlocal hits
        hits += 1
        if hits > 1:
            if on_force is not None:
                on_force()
            os._exit(130)
        task.cancel()
        on_interrupt()

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, interrupt)
    try:
        return await task
    except asyncio.CancelledError:
        if hits:
            raise Interrupted("interrupted") from None
        raise
    finally:
        # After an interrupt the handlers stay: asyncio.run's shutdown still runs this loop while it waits for the
        # worker threads, and a second Ctrl-C there must force the exit (closing the loop removes them).
        if not hits:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)
