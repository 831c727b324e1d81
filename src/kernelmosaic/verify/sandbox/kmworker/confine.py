"""Confinement a worker applies to itself after its imports and before any candidate code runs (stdlib only).

Landlock (Linux 5.13+, probed by its ABI version) limits what this process and every process it starts may do,
and no process inside can lift it: writes only beneath the folders the parent names (the scratch folder, the
build cache, /dev for device nodes and /dev/shm); with ABI 4+ no TCP bind or connect; with ABI 6+ no signal and
no abstract unix socket to a process outside the domain. Landlock also refuses ptrace attach and /proc/PID/mem
and cwd of processes outside the domain, and every mount; it let a process holding capabilities read another's
/proc/PID/environ (Linux 6.18), so workers also empty their capability sets. A child subreaper keeps orphaned
descendants (setsid, double fork) in this worker's tree, where the parent finds and kills them. A reference
worker runs no candidate code; it makes itself non-dumpable so processes of other users or namespaces cannot
read its /proc files or attach to it.

What it does not stop: code inside this process can read anything readable, spin, or allocate up to its limits;
the parent's namespaces, time limits and resource limits cover those.
"""

from __future__ import annotations

import ctypes
import os

__all__ = ["landlock_abi", "confine", "seal_tasks", "drop_capabilities", "OWN_TASKS", "PR_SET_DUMPABLE",
           "PR_SET_CHILD_SUBREAPER"]

PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
_PR_SET_NO_NEW_PRIVS = 38
_PR_CAPBSET_DROP = 24
_SYS_CAPSET = 126 if os.uname().machine == "x86_64" else 91  # aarch64's generic number
_CAP_VERSION_3 = 0x20080522
_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446  # the same on x86_64 and aarch64
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1

# Filesystem rights that change the tree (read and execute rights are not handled, so stay allowed everywhere).
_WRITE_RIGHTS_BY_ABI = (
    (1, (1 << 1) | (1 << 4) | (1 << 5) | (1 << 6) | (1 << 7) | (1 << 8) | (1 << 9) | (1 << 10) | (1 << 11) | (1 << 12)),
    (2, 1 << 13),  # REFER: linking or renaming across folders
    (3, 1 << 14),  # TRUNCATE
)
_REMOVE_DIR = 1 << 4
OWN_TASKS = "/proc/self/task"
"""Writable beneath Landlock for CUDA workers only (`tasks_writable`): this process's own threads' /proc files (the
rule binds the folder as opened now, so `/proc/<this pid>/task`, never another process's). CUDA's initialisation
writes there: on the H200 without it `cudaGetDeviceCount()` fails with error 304 ("OS call failed or operation not
supported"), with it every layer stays on (scripts/gpu/cuda-isolation-probe). It also leaves the process's own
memory writable through `/proc/self/task/TID/mem` (page protections ignored, like `/proc/self/mem`), so CPU workers,
which need none of it, do not get it."""
_NET_BIND_TCP, _NET_CONNECT_TCP = 1, 2
_SCOPE_ABSTRACT_UNIX, _SCOPE_SIGNAL = 1, 2

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 where Landlock is absent or disabled."""
    version = _libc.syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(int(version), 0)


def _prctl(option: int, value: int) -> bool:
    return _libc.prctl(ctypes.c_int(option), ctypes.c_ulong(value), ctypes.c_ulong(0), ctypes.c_ulong(0),
                       ctypes.c_ulong(0)) == 0


def _landlock(abi: int, writable: list[str], removable: list[str], no_tcp: bool, scope: bool) -> list[str]:
    write = 0
    for since, rights in _WRITE_RIGHTS_BY_ABI:
        if abi >= since:
            write |= rights
    attr = _RulesetAttr(handled_access_fs=write)
    size = 8
    layers = ["landlock-fs"]
    if no_tcp and abi >= 4:
        attr.handled_access_net = _NET_BIND_TCP | _NET_CONNECT_TCP
        size, layers = 16, [*layers, "landlock-net"]
    if scope and abi >= 6:
        attr.scoped = _SCOPE_ABSTRACT_UNIX | _SCOPE_SIGNAL
        size, layers = 24, [*layers, "landlock-scope"]
    fd = _libc.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if fd < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset")
    try:
        for path, allowed in [*((w, write) for w in writable), *((r, _REMOVE_DIR) for r in removable)]:
            try:
                folder = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # a folder that does not exist cannot be written into by anyone here either
            try:
                rule = _PathBeneath(allowed_access=allowed, parent_fd=folder)
                if _libc.syscall(_SYS_ADD_RULE, ctypes.c_int(fd), ctypes.c_int(_RULE_PATH_BENEATH), ctypes.byref(rule),
                                 ctypes.c_uint32(0)) != 0:
                    raise OSError(ctypes.get_errno(), f"landlock_add_rule {path}")
            finally:
                os.close(folder)
        if not _prctl(_PR_SET_NO_NEW_PRIVS, 1):
            raise OSError(ctypes.get_errno(), "PR_SET_NO_NEW_PRIVS")
        if _libc.syscall(_SYS_RESTRICT_SELF, ctypes.c_int(fd), ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self")
    finally:
        os.close(fd)
    return layers


def seal_tasks(writable: list[str], removable: list[str]) -> list[str]:
    """A second Landlock layer without `OWN_TASKS`, for a CUDA worker once CUDA has started (its context made, its
    threads named): this thread and the threads it starts later (where candidate code runs) may no longer write the
    process's own /proc/self/task files, `/proc/self/task/TID/mem` among them. CUDA's own threads, started before,
    keep the first layer. Returns ["landlock-tasks"] when applied."""
    abi = landlock_abi()
    if not abi:
        return []
    _landlock(abi, writable, removable, no_tcp=False, scope=False)  # network and scope rules stay the first layer's
    return ["landlock-tasks"]


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def drop_capabilities() -> bool:
    """Drop every capability from the bounding set and the effective, permitted and inheritable sets of this thread
    (and so of the threads and processes it starts). Root without capabilities still owns root's files, but reads no
    non-dumpable process's /proc files and signals nothing it does not own."""
    for cap in range(64):  # past the kernel's last capability the call fails with EINVAL: nothing to drop there
        _prctl(_PR_CAPBSET_DROP, cap)
    header = _CapHeader(_CAP_VERSION_3, 0)
    data = (_CapData * 2)()
    return _libc.syscall(_SYS_CAPSET, ctypes.byref(header), data) == 0


def confine(role: str, writable: list[str], landlock: bool, no_tcp: bool, scope: bool, subreaper: bool,
            drop_caps: bool = False, removable: list[str] | None = None, tasks_writable: bool = False) -> list[str]:
    """Apply what was asked and the kernel allows; returns the layers now active in this process (names as in
    `kernelmosaic.verify.isolation.LAYERS`). Must run in the main thread before any candidate code; Landlock
    applies to the calling thread and threads started after it, so torch's pools started earlier stay outside:
    they run only torch's own code. `removable`: folders beneath which only empty folders may be removed (the
    scratch folder's parent, so an orphaned worker can remove its own scratch folder). `tasks_writable`: its own
    /proc/self/task files stay writable (`OWN_TASKS`: CUDA workers)."""
    if role == "reference":  # runs no candidate code: it is what candidates must not read or attach to
        return ["reference-nondumpable"] if _prctl(PR_SET_DUMPABLE, 0) else []
    active: list[str] = []
    if subreaper and _prctl(PR_SET_CHILD_SUBREAPER, 1):
        active.append("subreaper")
    abi = landlock_abi() if landlock else 0
    if abi:
        active += _landlock(abi, [*writable, OWN_TASKS] if tasks_writable else writable, removable or [], no_tcp, scope)
    if drop_caps and drop_capabilities():
        active.append("no-capabilities")
    return active
