"""The worker's run time as the kernel accounts for it, read by the trusted parent from /proc around a request.

Per thread, `/proc/<pid>/task/<tid>/schedstat` holds the nanoseconds spent on a CPU and waiting on a run queue
(runnable, but another task had the CPU). Neither can be written by the thread itself, and together they time what a
thread wanted to run, whatever else the machine runs: on a busy host a CPU-bound thread's run + wait stays equal to
its wall time, while its wait is the part the load added. The parent's own thread is read the same way
(`/proc/thread-self/schedstat`): its wait is load, not the worker. `timed.py` takes a `snapshot` before and after a
wall-clock burst; `call_checks.wall_clock_finding` judges the `RunClock` between them.
"""

from __future__ import annotations

import os
from typing import NamedTuple

__all__ = ["RunClock", "Snapshot", "snapshot", "run_clock", "own_wait_ns", "waits", "load_delay_s"]


class Snapshot(NamedTuple):
    threads: dict[int, tuple[int, int]]
    """Thread id -> (ns on a CPU, ns waiting on a run queue), as the kernel counts them since the thread began."""
    parent_wait_ns: int
    """The calling (parent) thread's run-queue wait so far."""


class RunClock(NamedTuple):
    """What the kernel saw of the worker between two snapshots (milliseconds)."""

    busiest_runnable_ms: float
    """The largest run + wait of any one worker thread: how long that thread wanted a CPU. A thread can want a CPU
    no longer than the time that passed, so an honest worker's busiest thread stays within the burst it reports
    (plus the request's own handling); a clock slowed k times shows k times the report, at any load."""
    busiest_run_ms: float
    """The largest time on a CPU of any one worker thread (the work itself, which load does not stretch)."""
    main_wait_ms: float
    """Run-queue wait of the worker's main thread (the one that reads requests and makes the calls)."""
    threads_wait_ms: float
    """Run-queue wait of all the worker's threads together (helpers of a parallel loop included)."""
    parent_wait_ms: float
    """Run-queue wait of the parent's thread that timed the request."""
    threads: int
    """Worker threads seen in both snapshots."""

    @property
    def load_ms(self) -> float:
        """Time the request was held up by other work on the machine: the worker's main thread and the parent's
        thread waiting for a CPU. Both are on the request's critical path outside the calls; inside the calls the
        worker's own clock already holds them."""
        return self.main_wait_ms + self.parent_wait_ms

    @property
    def all_load_ms(self) -> float:
        """The same with every worker thread's wait: a parallel loop's calls end when its last helper got a CPU,
        so what held a helper up held the calls up (threads waiting at once are counted each, so this can
        exceed the delay: it only ever clears)."""
        return self.threads_wait_ms + self.parent_wait_ms


def _schedstat(path: str) -> tuple[int, int] | None:
    try:
        with open(path) as f:
            fields = f.read().split()
        return int(fields[0]), int(fields[1])
    except (OSError, ValueError, IndexError):
        return None


def own_wait_ns() -> int:
    """The calling thread's run-queue wait in ns (0 where the kernel does not report it)."""
    got = _schedstat("/proc/thread-self/schedstat")
    return got[1] if got else 0


def snapshot(pid: int) -> Snapshot | None:
    """Every thread of process `pid`, or None where /proc has no schedstat for it (not Linux, or the process is
    gone): the parent then judges by its wall clock alone."""
    try:
        tids = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except (OSError, ValueError):
        return None
    threads = {}
    for tid in tids:
        got = _schedstat(f"/proc/{pid}/task/{tid}/schedstat")
        if got is not None:
            threads[tid] = got
    if pid not in threads:
        return None
    return Snapshot(threads, own_wait_ns())


def run_clock(pid: int, before: Snapshot | None, after: Snapshot | None) -> RunClock | None:
    """The worker's run time between two snapshots of process `pid`. A thread that began in between counts from
    zero; one that ended in between is not seen (its time is lost to this view, never added to a report)."""
    if before is None or after is None:
        return None
    runnable, run, waits = [], [], 0
    for tid, (r1, w1) in after.threads.items():
        r0, w0 = before.threads.get(tid, (0, 0))
        runnable.append((r1 - r0) + (w1 - w0))
        run.append(r1 - r0)
        waits += w1 - w0
    main_wait = after.threads[pid][1] - before.threads[pid][1]
    return RunClock(busiest_runnable_ms=round(max(runnable) / 1e6, 3), busiest_run_ms=round(max(run) / 1e6, 3),
                    main_wait_ms=round(main_wait / 1e6, 3), threads_wait_ms=round(waits / 1e6, 3),
                    parent_wait_ms=round((after.parent_wait_ns - before.parent_wait_ns) / 1e6, 3),
                    threads=len(set(before.threads) & set(after.threads)))


def waits(pid: int) -> dict[int, int]:
    """Run-queue wait in ns so far of every thread of process `pid` (empty where /proc has no schedstat)."""
    got = snapshot(pid)
    return {tid: w for tid, (_, w) in got.threads.items()} if got is not None else {}


def load_delay_s(pid: int, before: dict[int, int]) -> float:
    """How long other work on the machine held process `pid` up since `before` (`waits`): the longest run-queue
    wait of any one of its threads, a thread that began since counted from zero. A request's deadline measured in
    wall time less this is a limit on the worker's own work, whatever the machine's load (0 where /proc cannot
    tell)."""
    now = waits(pid)
    return max((w - before.get(tid, 0) for tid, w in now.items()), default=0) / 1e9
