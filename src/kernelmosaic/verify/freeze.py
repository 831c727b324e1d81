"""The candidate held still while its baselines are timed.

Eager and `torch.compile` run in the reference worker, interleaved with the candidate's rounds, while the candidate's
worker sits idle between requests. Idle is the worker's choice, not the candidate's: a thread or process its native
code started can burn the host's cores (or its memory bandwidth) exactly while the baseline is timed, and rest
while its own calls are, which slows the baseline and inflates the candidate's speedup. So around every baseline
timing request the parent stops the candidate's whole process tree with SIGSTOP (a signal no process can catch,
block or ignore, forcibly delivered to a PID namespace's init from its ancestor) and continues it afterwards. The
worker is a child subreaper (or its PID namespace's init), so every process the candidate made, `setsid` and double
forks included, is in the tree the parent walks here; a process that forks while the tree is read is stopped in a
later pass (a stopped process cannot fork).

What it does not stop: device work a candidate enqueued before it was stopped keeps running on the GPU (the worker
synchronizes its device before each reply, so only native code that enqueues after the reply leaves any; see
docs/threat-model.md, "Not covered").
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from kernelmosaic.verify.isolation import descendants

__all__ = ["Held", "held_still"]

_STOPPED = ("T", "t", "Z", "X")
"""/proc states of a process that runs no instruction: stopped, traced, zombie, dead."""


@dataclass
class Held:
    """What one freeze stopped."""

    processes: int = 0
    """Processes stopped, the worker included (0: nothing was stopped: no worker, or /proc unreadable)."""
    others: list[int] = field(default_factory=list)
    """Processes of the tree besides the worker itself: what the candidate started (a worker makes none)."""
    settled: bool = True
    """Every stopped process reached a stopped state before the timing began."""


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "X"  # gone: runs nothing


def _stop(pid: int, stopped: list[int]) -> None:
    try:
        os.kill(pid, signal.SIGSTOP)
    except OSError:
        return
    stopped.append(pid)


@contextmanager
def held_still(pid: int, rounds: int = 50, settle_s: float = 2.0) -> Iterator[Held]:
    """Stop process `pid` and every descendant for the block, then continue them. `pid` 0: nothing is stopped.
    Waits (at most `settle_s`) until each stopped process shows a stopped state, so no instruction of the
    candidate's runs once the block begins. A process stops when it next runs, which on a loaded machine can be
    a while: 0.2 s was not enough for a grandchild at load 5 on two cores (CI, 2026-12-06); the wait ends as soon
    as all are stopped, so the longer bound costs nothing on an idle machine."""
    held = Held()
    stopped: list[int] = []
    try:
        if pid > 0:
            _stop(pid, stopped)
            for _ in range(rounds):
                fresh = [p for p in descendants(pid) if p not in stopped]
                if not fresh:
                    break
                for p in fresh:
                    _stop(p, stopped)
            deadline = time.monotonic() + settle_s
            waiting = list(stopped)
            while waiting and time.monotonic() < deadline:
                waiting = [p for p in waiting if _state(p) not in _STOPPED]
                if waiting:
                    time.sleep(0.0002)
            held.settled = not waiting
            held.processes = len(stopped)
            held.others = [p for p in stopped if p != pid]
        yield held
    finally:
        for p in stopped:
            try:
                os.kill(p, signal.SIGCONT)
            except OSError:
                pass
