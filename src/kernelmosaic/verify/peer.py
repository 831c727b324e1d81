"""Who is on the other end of a verifier service connection: its owner, or a process that must not be served.

The kernel reports the connecting process (`SO_PEERCRED`: pid and uid at `connect`), and the service judges it by
runtime facts a candidate cannot undo: its uid; the namespaces it lives in (a worker's sandbox has its own user, PID
or network namespace, and every process it starts inherits them); the confinement it carries (`no_new_privs`,
seccomp and a reduced capability bounding set are inherited and irreversible, and Landlock needs the first); and its
parent chain, walked up `/proc/<pid>/stat` from the kernel-reported pid, reaching a worker this process runs. Where
the kernel gives a pidfd of the peer (`SO_PEERPIDFD`, Linux 6.5), the walk is checked to have been about that
process and not a later one with its number. Nothing the peer sends is trusted for this.

What this does not see: on a host where workers get no isolation layer at all, a candidate's process that double
forks and is reparented outside the worker's tree (the worker's subreaper undone) carries no marker; such a host
does not meet the minimum isolation (`verify/isolation.py`), and no verdict judged there is *verified*.
"""

from __future__ import annotations

import os
import socket
import struct
from collections.abc import Iterable

__all__ = ["peer_refusal", "NAMESPACES"]

_SO_PEERPIDFD = getattr(socket, "SO_PEERPIDFD", 77)
NAMESPACES = ("user", "pid", "net")
"""Namespaces a client must share with the service: a worker's sandbox has its own."""


def _status(pid: int | str) -> dict[str, str]:
    with open(f"/proc/{pid}/status") as f:
        return {k: v.strip() for k, _, v in (line.partition(":") for line in f)}


def _ppid(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


def _peer_pidfd(conn: socket.socket) -> int | None:
    try:
        return struct.unpack("i", conn.getsockopt(socket.SOL_SOCKET, _SO_PEERPIDFD, 4))[0]
    except OSError:
        return None


def _pidfd_pid(fd: int) -> int:
    with open(f"/proc/self/fdinfo/{fd}") as f:
        for line in f:
            if line.startswith("Pid:"):
                return int(line.split()[1])
    return -1


def _confinement(pid: int) -> str | None:
    """Why process `pid` is more confined than this one (a worker's sandbox), or None."""
    for ns in NAMESPACES:
        if os.readlink(f"/proc/{pid}/ns/{ns}") != os.readlink(f"/proc/self/ns/{ns}"):
            return f"it lives in another {ns} namespace (a worker's sandbox)"
    theirs, mine = _status(pid), _status("self")
    if theirs.get("NoNewPrivs", "0") != "0" and mine.get("NoNewPrivs", "0") == "0":
        return "it runs with no_new_privs set (as a sandboxed worker does) and the service does not"
    if int(theirs.get("Seccomp", "0")) > int(mine.get("Seccomp", "0")):
        return "it runs under a seccomp filter the service does not have"
    their_bound, my_bound = int(theirs.get("CapBnd", "0"), 16), int(mine.get("CapBnd", "0"), 16)
    if their_bound != my_bound and their_bound & my_bound == their_bound:
        return "its capability bounding set is smaller than the service's (a worker dropped it)"
    return None


def _worker_ancestor(pid: int, workers: set[int]) -> int | None:
    """The worker among `pid`'s ancestors (itself included), else None; OSError when the chain cannot be read."""
    seen = 0
    while pid > 1 and seen < 4096:
        if pid in workers:
            return pid
        pid, seen = _ppid(pid), seen + 1
    return None


def peer_refusal(conn: socket.socket, workers: Iterable[int]) -> str | None:
    """Why the process on the other end of `conn` must not be served, or None when it is the service's owner and no
    worker's. `workers`: pids of the worker processes this process runs (`pool.live_worker_pids`)."""
    pid, uid, _gid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
    me = os.geteuid()
    if uid != me:
        return f"the connecting process runs as uid {uid}; this service answers only its owner, uid {me}"
    if pid <= 0:
        return "the connecting process is in a PID namespace the service cannot see (a worker's sandbox)"
    if pid == os.getpid():
        return None  # the service's own forwarded commands (verify/forwarded.py)
    pidfd = _peer_pidfd(conn)
    try:
        why = _confinement(pid)
        if why is None and (worker := _worker_ancestor(pid, set(workers))) is not None:
            why = f"it descends from worker process {worker} of this service (a candidate's or a compile's process)"
        if pidfd is not None and _pidfd_pid(pidfd) != pid:
            why = "it exited before its identity was checked"
    except (OSError, ValueError, IndexError) as exc:
        why = f"its identity could not be read from /proc ({exc})"
    finally:
        if pidfd is not None:
            os.close(pidfd)
    return None if why is None else f"process {pid} refused: {why}"
