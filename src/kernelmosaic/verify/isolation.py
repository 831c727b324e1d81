"""OS-level isolation of every process that runs candidate code: what this host supports, what each device type
uses, and whether a set of active layers meets the minimum a *verified* verdict needs.

Two halves. Namespaces are entered by a worker forked from the fork server itself (`kmworker/zygote.py`:
`unshare(2)` through ctypes, as Python 3.11 has no `os.unshare`, and a second fork for the PID namespace's init), or
by the `unshare` tool in front of a freshly started worker's command (`Plan.prefix`; a preexec hook cannot enter a PID
namespace itself). Landlock, the child subreaper and the
reference's non-dumpable flag are applied by the worker to itself before it imports torch
(`kmworker/confine.py`), because Landlock binds the calling thread and the threads it starts later.

Per device type: on CPU a user namespace (root mapped to the caller) carries a network namespace, a PID
namespace with the worker as its init, and a mount namespace with its own /proc, so a candidate sees no other
process and every process it makes dies with the worker. On CUDA no user namespace and no PID namespace: CUDA
IPC (the reference hands its inputs to candidate workers as IPC handles) and device-node access are only known to
work in the host's PID and user namespaces, so a GPU worker gets a network namespace where this process may make
one without a user namespace (root with CAP_SYS_ADMIN), Landlock (which touches neither), no capabilities (CUDA
needs none), and a subreaper whose tree the parent kills. `KERNELMOSAIC_ISOLATION_CPU` / `KERNELMOSAIC_ISOLATION_CUDA` (comma-separated layer
names, or `none`) narrow a device type's layers; layers the host lacks are dropped and reported, never faked.
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["LAYERS", "Plan", "plan_for", "describe", "children", "descendants", "kill_tree", "writable_paths", "candidate_caches", "host_support",
           "namespace_prefix"]

log = logging.getLogger(__name__)

LAYERS = {
    "userns": "own user namespace: no capability over the host's processes or files beyond its uid's",
    "netns": "own network namespace: no interface but a down loopback, no route to any listener",
    "pidns": "own PID namespace and /proc: sees and signals only its own processes, all die with the worker",
    "landlock-fs": "Landlock: writes only beneath its scratch folder and /dev (a CUDA worker: its own /proc/self/task "
                   "too, which CUDA's start writes); no write to its own memory file (CPU), no mount, no ptrace "
                   "attach, /proc/PID/mem or cwd of a process outside its domain",
    "landlock-tasks": "Landlock, a second layer once CUDA has started: its own /proc/self/task read-only too, so no "
                      "write to its own memory through /proc/self/task/TID/mem (CUDA workers; not on by default)",
    "landlock-net": "Landlock: no TCP bind or connect",
    "landlock-scope": "Landlock: no signal and no abstract unix socket to a process outside its domain",
    "subreaper": "worker is child subreaper: orphans (setsid, double fork) stay in its tree, killed with it",
    "no-capabilities": "no capability in any set: no /proc read (environ, maps) of a process holding capabilities or "
                       "not dumpable, no signal to another uid's process",
    "reference-nondumpable": "reference worker is not dumpable: its /proc files and memory need CAP_SYS_PTRACE",
}
"""Every layer a verdict can record, and what it stops."""

_DEFAULTS = {
    "cpu": ("userns", "netns", "pidns", "landlock-fs", "landlock-net", "landlock-scope", "subreaper",
            "no-capabilities", "reference-nondumpable"),
    "cuda": ("netns", "landlock-fs", "landlock-net", "landlock-scope", "subreaper", "no-capabilities",
             "reference-nondumpable"),
}


@dataclass(frozen=True)
class Plan:
    """The layers a worker of one device type starts with on this host."""

    device_type: str
    prefix: tuple[str, ...] = ()
    """The `unshare` command in front of the worker's (empty: no namespace)."""
    namespaces: tuple[str, ...] = ()
    forks: bool = False
    """The prefix forks: the worker is a child of the `unshare` process (`Worker.pid` finds it)."""
    landlock: bool = False
    no_tcp: bool = False
    scope: bool = False
    subreaper: bool = False
    drop_caps: bool = False
    nondumpable_reference: bool = False
    seal_tasks: bool = False
    """A CUDA worker stacks a second Landlock layer without its own /proc/self/task once CUDA has started."""
    unavailable: tuple[str, ...] = field(default_factory=tuple)
    """Layers this device type asks for that the host does not give."""

    def worker_args(self) -> list[str]:
        """`kmworker` flags that ask the worker to confine itself."""
        flags = [("--landlock", self.landlock), ("--no-tcp", self.no_tcp), ("--scope", self.scope),
                 ("--subreaper", self.subreaper), ("--drop-caps", self.drop_caps),
                 # CUDA's start writes its threads' /proc files (kmworker/confine.py, OWN_TASKS)
                 ("--tasks-writable", self.landlock and self.device_type == "cuda"),
                 ("--seal-tasks", self.seal_tasks)]
        return [name for name, on in flags if on]


def _works(cmd: list[str]) -> bool:
    try:
        return subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              timeout=20).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


@functools.cache
def host_support() -> dict[str, bool]:
    """What this host lets this process do, found by trying it (once per process)."""
    from kernelmosaic.verify.sandbox.kmworker.confine import landlock_abi

    tool = shutil.which("unshare")
    user = bool(tool) and _works([tool, "--user", "--map-root-user", "--net", "--pid", "--fork", "--kill-child",
                                  "--mount", "--mount-proc", "true"])
    abi = landlock_abi()
    return {"unshare": bool(tool), "userns": user, "netns-plain": bool(tool) and _works([tool, "--net", "true"]),
            "landlock": abi >= 1, "landlock-net": abi >= 4, "landlock-scope": abi >= 6}


_ENV = {"cpu": "KERNELMOSAIC_ISOLATION_CPU", "cuda": "KERNELMOSAIC_ISOLATION_CUDA"}
"""The environment variable that narrows each device type's layers (docs/configuration.md)."""


def _wanted(device_type: str) -> tuple[str, ...]:
    name = _ENV[device_type]
    raw = os.environ.get(name)
    if raw is None:
        return _DEFAULTS[device_type]
    names = tuple(n.strip() for n in raw.split(",") if n.strip() and n.strip() != "none")
    unknown = [n for n in names if n not in LAYERS]
    if unknown:
        raise ValueError(f"{name}: unknown layer(s) {unknown}; known: {list(LAYERS)}")
    return names


@functools.cache
def plan_for(device_type: str) -> Plan:
    """The layers workers of `device_type` ("cpu" or "cuda") get here: what is asked, intersected with what works."""
    want = set(_wanted(device_type))
    have = host_support()
    tool = shutil.which("unshare") or "unshare"
    prefix: list[str] = []
    spaces: list[str] = []
    forks = False
    if "userns" in want and have["userns"]:
        prefix, spaces = [tool, "--user", "--map-root-user"], ["userns"]
        if "netns" in want:
            prefix.append("--net")
            spaces.append("netns")
        if "pidns" in want:
            prefix += ["--pid", "--fork", "--kill-child", "--mount", "--mount-proc"]
            spaces.append("pidns")
            forks = True
    elif "netns" in want and have["netns-plain"]:
        prefix, spaces = [tool, "--net"], ["netns"]
    if prefix:
        prefix.append("--")
    got = {*spaces, *(["landlock-fs"] if have["landlock"] else []), *(["landlock-net"] if have["landlock-net"] else []),
           *(["landlock-scope"] if have["landlock-scope"] else []), "subreaper", "no-capabilities",
           "reference-nondumpable", *(["landlock-tasks"] if have["landlock"] and device_type == "cuda" else [])}
    plan = Plan(device_type, tuple(prefix), tuple(spaces), forks, landlock="landlock-fs" in want and have["landlock"],
                no_tcp="landlock-net" in want and have["landlock-net"],
                scope="landlock-scope" in want and have["landlock-scope"], subreaper="subreaper" in want,
                drop_caps="no-capabilities" in want,
                nondumpable_reference="reference-nondumpable" in want,
                seal_tasks="landlock-tasks" in want and "landlock-tasks" in got and "landlock-fs" in want,
                unavailable=tuple(sorted(want - got)))
    if plan.unavailable:
        log.warning("isolation on %s: not available on this host: %s", device_type, ", ".join(plan.unavailable))
    return plan


def namespace_prefix(device: str) -> list[str]:
    """The namespace command for a process on `device` that runs candidate code outside a worker (the sanitizer)."""
    return list(plan_for("cuda" if device.startswith("cuda") else "cpu").prefix)


def candidate_caches(root: str) -> dict[str, str]:
    """The Triton, Inductor, CuPy, CUDA JIT and torch extension caches of a process that runs candidate code: beneath
    `root`, its own
    scratch folder. Never this user's own, which the reference worker and the torch.compile baseline load compiled
    code from, and never a folder another candidate's process reads: a candidate that could write either could plant
    code the reference runs, or a kernel binary another candidate is judged on."""
    base = Path(root)
    # torch's own extension builds too: a `load_inline` the candidate imports and calls after its import (in
    # `__init__`, from a lazy loader) is the real one, whose default folder (~/.cache) the worker may not write
    return {"TRITON_CACHE_DIR": str(base / "triton"), "TORCHINDUCTOR_CACHE_DIR": str(base / "inductor"),
            "CUDA_CACHE_PATH": str(base / "nv"), "CUPY_CACHE_DIR": str(base / "cupy"),
            "TORCH_EXTENSIONS_DIR": str(base / "torch_extensions")}


def writable_paths(extra: tuple[str, ...]) -> list[str]:
    """Where a confined worker may write besides its scratch folder (its working directory, which the worker adds
    itself so that no argument names it): what the caller names (a builder: its extension's folder), and device
    nodes and /dev/shm; the same for every device type."""
    for folder in extra:
        Path(folder).mkdir(parents=True, exist_ok=True)
    return [*extra, "/dev"]


def describe(layers: list[str] | tuple[str, ...]) -> list[str]:
    """One line per active layer, with what it stops."""
    return [f"{name}: {LAYERS.get(name, 'unknown layer')}" for name in layers]


def children(pid: int) -> list[int]:
    """The direct children of `pid` (every thread's), read from /proc."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tasks:
        try:
            found += [int(c) for c in Path(f"/proc/{pid}/task/{tid}/children").read_text().split()]
        except (OSError, ValueError):
            continue
    return found


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (children, theirs, ...), read from /proc."""
    seen: list[int] = []
    todo = children(pid)
    while todo:
        child = todo.pop()
        if child not in seen:
            seen.append(child)
            todo += children(child)
    return seen


def kill_tree(pid: int, rounds: int = 50) -> int:
    """Stop every descendant of `pid` (so none forks while the tree is read), until no new one appears, then kill
    them all. `pid` itself is left alone. Returns how many were killed."""
    stopped: list[int] = []
    for _ in range(rounds):
        fresh = [p for p in descendants(pid) if p not in stopped]
        if not fresh:
            break
        for p in fresh:
            try:
                os.kill(p, signal.SIGSTOP)
            except OSError:
                continue
            stopped.append(p)
        time.sleep(0.001)
    for p in stopped:
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass
    return len(stopped)
