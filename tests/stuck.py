"""Where a stuck test waits: every thread's stack of the test process, and of each verifier worker below it.

pytest-timeout fails a stuck test with its own main thread's stack, but by then the judgement's workers are being
ended and what they waited on is gone. `conftest.py` calls `dump` from a timer a little before that
(`KM_STACKS_AFTER_S` seconds into a test; off by default), while everything still waits: the test process's threads
(faulthandler), its descendant processes (state, kernel wait channel), each kmworker's Python stacks (kmworker writes
them to its log on SIGUSR2), the file locks and, where there is one, the GPU's state. Appended to `KM_STACKS_FILE`
(standard error if unset)."""

from __future__ import annotations

import faulthandler
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["dump", "descendants"]


def _stat(pid: int) -> tuple[int, str] | None:
    """(parent pid, state) of `pid`, from /proc (None when it is gone)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rfind(")") + 2:].split()
    return int(fields[1]), fields[0]


def descendants(root: int) -> list[int]:
    """Every process below `root`, breadth first."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (st := _stat(int(entry))) is not None:
            children.setdefault(st[0], []).append(int(entry))
    found, queue = [], [root]
    while queue:
        for child in sorted(children.get(queue.pop(0), [])):
            found.append(child)
            queue.append(child)
    return found


def _read(path: str, limit: int = 200) -> str:
    try:
        with open(path, "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()[:limit]
    except OSError:
        return "?"


def _tail(path: str, size: int) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(max(0, os.fstat(f.fileno()).st_size - size))
            return f.read().decode(errors="replace")
    except OSError as exc:
        return f"(unreadable: {exc})"


def dump(nodeid: str, path: str | None = None) -> None:
    """Write where `nodeid` waits now (see the module's text)."""
    out = open(path, "a") if path else sys.__stderr__  # noqa: SIM115 - closed below unless it is stderr
    try:
        out.write(f"\n===== {time.strftime('%H:%M:%S')} still running: {nodeid} (load {os.getloadavg()})\n")
        out.flush()
        faulthandler.dump_traceback(file=out, all_threads=True)
        workers = []
        for pid in descendants(os.getpid()):
            cmd = _read(f"/proc/{pid}/cmdline", 4000)
            out.write(f"-- {pid} [{(_stat(pid) or (0, '?'))[1]}] wchan={_read(f'/proc/{pid}/wchan', 40)}: {cmd[:200]}\n")
            if "kmworker" in cmd:
                workers.append(pid)
                try:
                    os.kill(pid, signal.SIGUSR2)
                except OSError:
                    pass
        out.write("-- /proc/locks\n" + _read("/proc/locks", 4000) + "\n")
        out.flush()
        time.sleep(3)  # the workers' faulthandler writes to their logs
        for pid in workers:
            out.write(f"-- worker {pid}'s log (tail)\n{_tail(f'/proc/{pid}/fd/1', 6000)}\n")
        try:
            gpu = subprocess.run(["nvidia-smi"], capture_output=True, text=True, timeout=15)  # utilization, processes
            out.write(f"-- nvidia-smi\n{gpu.stdout}{gpu.stderr}\n")
        except (OSError, subprocess.TimeoutExpired):
            pass
        out.flush()
    finally:
        if out is not sys.__stderr__:
            out.close()
