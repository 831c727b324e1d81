"""Worker processes as seen from the trusted parent: spawn, talk, watch, kill.

Each worker is `python -m kmworker` in its own process group and scratch directory, with per-call timeouts,
an address-space cap where it can be applied (CPU), and a resident-memory watch where it cannot (CUDA reserves
huge virtual ranges). A worker that timed out, crashed, ran out of memory or saw a CUDA error is discarded.
Candidate and compile workers start inside the isolation layers of their device type (`isolation.py`); every
process a worker made is killed with it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path

from kernelmosaic.verify import forkserver, isolation, runclock
from kernelmosaic.verify.clean_env import clean_env
from kernelmosaic.verify.scratch import forget_scratch, make_scratch, record_worker, remove_made_scratch
from kernelmosaic.verify.stopping import on_stop, stop_requested

__all__ = ["Worker", "WorkerDied", "WorkerStartFailed", "DeviceCrowded", "stopping_death", "WorkerError", "WorkerLimits", "WORKER_PACKAGE_DIR", "worker_env", "ToolCommand", "tool_command", "tool_layers", "live_worker_pids",
           "kill_all_workers"]

log = logging.getLogger(__name__)
calls_log = logging.getLogger(f"{__name__}.calls")
"""One DEBUG record per request to a worker (its role and op): `kernelmosaic verify` shows them as its progress."""

WORKER_PACKAGE_DIR = Path(__file__).resolve().parent / "sandbox"  # holds only the top-level package `kmworker`
SAFE_PATH = ("-P",)
"""Interpreter flags of every worker: no working directory (the worker's scratch folder, which candidate code can
write) at the front of `sys.path`; `sys.path` is PYTHONPATH (the worker package first) and the interpreter's own."""
LOAD_GRACE = 4.0
"""A request's time limit counts the worker's own work: time its threads waited for a CPU (a loaded machine) is added
on, up to this many times the limit, after which a worker still not done is ended whatever held it up."""


class WorkerDied(Exception):
    """The worker process ended or was ended: `kind` is timeout, crash or resource."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail


class WorkerStartFailed(WorkerDied):
    """The worker never came up (it timed out, crashed or was killed before its first answer): no candidate's or
    problem's code had run in it, so nothing about them was learnt. Not a verdict: the judgement is not made, and
    the caller reports an infrastructure failure (a host too loaded to start Python and torch in time, a device
    that will not initialise) that running again may not meet."""


class DeviceCrowded(Exception):
    """An out-of-memory, with the device held alone, that memory held by other processes explains: the judgement's
    own need (the candidate's process with its failed allocation, and the reference's problem) fits the device, but
    not beside what the rest of the machine keeps there. Not a verdict: nothing about the candidate was learnt (on
    the H200 four verifier processes on one GPU rejected an honest 32 GiB allocation with 135 GiB of the device taken
    by the others). The caller reports it as the machine's failure; judged again on a quieter device it stands."""


def stopping_death() -> WorkerDied:
    """What work cut by this process's stop (verify/stopping.py) raises where a worker would have served it."""
    return WorkerDied("crash", "interrupted: this process is stopping")


class WorkerError(Exception):
    """The worker answered a request with an error (an exception inside the worker)."""

    def __init__(self, error: dict) -> None:
        super().__init__(error.get("message", ""))
        self.error = error


@dataclass
class WorkerLimits:
    address_space_bytes: int | None = None
    rss_bytes: int | None = None
    extra_env: dict[str, str] = field(default_factory=dict)
    nice: int = 0
    """Added to the worker's CPU niceness at its start (its children inherit it): a compile nobody waits on first."""
    writable: tuple[str, ...] = ()
    """Folders besides its scratch folder a confined worker may write into (a builder: its extension's folder)."""


def limit_args(limits: WorkerLimits) -> list[str]:
    """`kmworker` flags that apply `limits` in the worker itself, first thing at its start (no core file always).
    Not a `preexec_fn`: Python code between fork and exec in this multi-threaded process runs the interpreter's
    at-fork hooks, and `logging`'s takes its module lock and then the import lock. On the H100 (2026-12-06) a
    compile thread importing setuptools for the first time (its `_distutils_hack` finder imports while holding the
    import lock) waited for the logging lock while spawning threads held it waiting for the import lock: every
    judgement of the process stopped, the host idle, until the run's deadline."""
    args = []
    if limits.address_space_bytes:
        args += ["--rlimit-as", str(limits.address_space_bytes)]
    if limits.nice:
        args += ["--nice", str(limits.nice)]
    return args


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


WAIT_ASLEEP = {"OMP_WAIT_POLICY": "PASSIVE", "KMP_BLOCKTIME": "0"}
"""OpenMP's threads (ATen's `parallel_for`, MKL and oneDNN, a candidate's `#pragma omp`) sleep when they wait
instead of spinning, in every worker whatever the caller's environment says. A spinning thread is on a CPU while it
waits for a preempted sibling, so on a loaded host its spin counts as the call's work in the kernel's account of
the worker's threads (runclock.py) and in host timing: on two cores with two busy processes per core, an honest
`parallel_for` triangular matmul of the CPU corpus was timed at 0.05-0.06x eager and rejected on the call-time bound
in 1 of 3 runs with the threads spinning, and timed at 0.97-1.16x and accepted 3 of 3 with them asleep
(tests/verify/test_loaded_cpu.py judges it loaded). Inductor's C++ for the CPU opens an OpenMP region on every
call: beside a full test run, an add+relu's `torch.compile` baseline timed 14-39 ms with spinning threads in 7 of 8
verdicts (so "150-340x vs torch.compile"), and 0.26 ms in 2 of 4 asleep (3.8-4.0 ms, IQR over 1x, in the others:
a helper thread waits for a CPU either way). Eager and the candidate run under the same policy, so their ratio stays
fair."""


def worker_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The allowed part of this process's environment (`clean_env`: no credentials, no store URL) plus `extra`, with
    the worker package first on PYTHONPATH (and no empty entry, which would put the working directory on the
    worker's `sys.path`), and OpenMP's threads asleep while they wait (`WAIT_ASLEEP`)."""
    env = {**clean_env(extra=extra), **WAIT_ASLEEP}
    env["PYTHONPATH"] = os.pathsep.join([str(WORKER_PACKAGE_DIR), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


@dataclass(frozen=True)
class ToolCommand:
    """How an outside tool (compute-sanitizer, ncu) runs one forward of candidate code: inside the isolation of the
    device type's candidate workers. `prefix` (the namespaces) goes in front of the tool, so the tool and its target
    share them; `target` is `kmworker.profile_one`, which confines itself (Landlock, subreaper, capabilities) before
    torch or the candidate loads; it runs in `cwd`, a scratch folder of its own (never the caller's working
    directory), with a worker's environment (no credentials) and its own compiler caches."""

    prefix: list[str]
    target: list[str]
    env: dict[str, str]
    cwd: Path
    layers: list[str]
    """The layers asked for (the namespaces, and the flags `profile_one` applies where the kernel allows)."""

    def around(self, tool: list[str]) -> list[str]:
        return [*self.prefix, *tool, *self.target]


_FLAG_LAYER = {"--landlock": "landlock-fs", "--no-tcp": "landlock-net", "--scope": "landlock-scope",
               "--subreaper": "subreaper", "--drop-caps": "no-capabilities", "--seal-tasks": "landlock-tasks"}


def tool_command(problem: Path, candidate: Path, device: str, build_cache: Path, scratch: Path,
                 env_extra: dict[str, str] | None = None, gate: Path | None = None) -> ToolCommand:
    """The confined command for `kmworker.profile_one` under a tool; `scratch` must exist (the caller removes it).
    `gate`: the target sets up, writes `profile_one.READY` in `scratch` and waits for this file before its forward."""
    plan = isolation.plan_for("cuda" if device.startswith("cuda") else "cpu")
    # the tool's target loads the candidate before its CUDA context is made: no second layer there (`--seal-tasks`)
    flags = [f for f in plan.worker_args() if f != "--seal-tasks"] + (["--gate", str(gate)] if gate is not None else [])
    for path in isolation.writable_paths(()):
        flags += ["--writable", path]
    tmp = scratch / "tmp"
    tmp.mkdir(exist_ok=True)
    env = worker_env({**(env_extra or {}), "PYTHONDONTWRITEBYTECODE": "1", "TMPDIR": str(tmp),
                      **isolation.candidate_caches(str(tmp))})
    target = [sys.executable, *SAFE_PATH, "-m", "kmworker.profile_one", *flags, str(problem), str(candidate),
              "cuda" if device.startswith("cuda") else device, str(build_cache)]
    return ToolCommand(list(plan.prefix), target, env, scratch, tool_layers(device))


def tool_layers(device: str) -> list[str]:
    """The isolation layers `tool_command` asks for on `device` (the namespaces and profile_one's own)."""
    plan = isolation.plan_for("cuda" if device.startswith("cuda") else "cpu")
    return [*(plan.namespaces if plan.prefix else []),
            *(_FLAG_LAYER[flag] for flag in plan.worker_args() if flag in _FLAG_LAYER and flag != "--seal-tasks")]


_LIVE: weakref.WeakSet[Worker] = weakref.WeakSet()
"""Every started worker of this process, so an interrupt can stop them all at once (`kill_all_workers`)."""


def live_worker_pids() -> set[int]:
    """Process ids of this process's running workers (the `unshare` in front of one, whose child it is): the verifier
    service refuses connections from their descendants (verify/peer.py)."""
    return {w.proc.pid for w in list(_LIVE) if w.proc is not None and w.proc.poll() is None}


def kill_all_workers() -> int:
    """Kill every live worker process group (Ctrl-C): calls blocked on them return at once. Returns how many."""
    workers = [w for w in list(_LIVE) if w.proc is not None and w.proc.poll() is None]
    for worker in workers:
        worker.kill()
    return len(workers)


def kill_stray_workers() -> int:
    """When stopping, after `kill_all_workers`: kill every worker process still below this one, including one no live
    `Worker` holds (its object dropped while its process ran), found in /proc by its command line (`kmworker`), its
    process group killed. Returns how many groups."""
    killed = 0
    for pid in isolation.descendants(os.getpid()):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"kmworker" not in argv and not any(a.startswith(b"kmworker.") for a in argv):
            continue
        try:
            scratch = Path(os.readlink(f"/proc/{pid}/cwd"))  # a worker starts in its scratch folder
        except OSError:
            scratch = None
        try:
            os.killpg(os.getpgid(pid), signal.SIGKILL)
            killed += 1
        except (ProcessLookupError, PermissionError):
            continue
        if scratch is not None and scratch.name.startswith("km-") and scratch.parent.name not in ("", "/"):
            shutil.rmtree(scratch, ignore_errors=True)  # nobody else holds it: its Worker was dropped
    return killed


on_stop(kill_all_workers)
on_stop(kill_stray_workers)
on_stop(forkserver.close_all)
on_stop(remove_made_scratch)  # after the kills: also the folders of workers made but never spawned


class Worker:
    def __init__(self, role: str, device: str, limits: WorkerLimits, scratch_root: Path | None = None,
                 keep_scratch: bool = False) -> None:
        self.role, self.device, self.limits = role, device, limits
        self.keep_scratch = keep_scratch
        self.scratch = make_scratch(role, scratch_root, keep_scratch)
        self._tail = ""  # the end of the output log, kept when the scratch directory is removed
        self.log_path = self.scratch / "output.log"
        self.proc: subprocess.Popen | forkserver.ForkedProcess | None = None
        self.channel = None
        self.env: dict = {}
        self.poisoned = False
        self.deferred = False
        """Spawned with `defer_device` and not yet activated."""
        self.ready = False
        """It greeted: its device is set up and it serves requests (`env` holds what it reported)."""
        self.hold = None
        """The judgement's hold on the device (devlock.DeviceHold), taken shared around every call; None: none."""
        self.plan = isolation.plan_for("cuda" if device.startswith("cuda") else "cpu")
        self._pid = 0
        self.isolation: list[str] = []
        """The isolation layers active around this worker (namespaces it started in, and what it applied itself)."""
        self.watched: list[tuple[str, int, int]] = []
        """(label, address, bytes) in the worker of what leads to its timer's and channel's C functions (its hello)."""
        if stop_requested():  # made after the stop's sweep: it goes now, and `spawn` refuses to start it
            self._remove_scratch()

    def start(self, timeout: float = 120.0) -> dict:
        """Start the worker and wait until it is ready on its device; returns its environment."""
        self.spawn()
        return self._ready(timeout)

    def spawn(self, defer_device: bool = False) -> None:
        """Launch the process without waiting for it. With `defer_device` it loads Python and torch and then waits,
        touching no device, until `activate()`: a spare that can start while another candidate is timed."""
        from kernelmosaic.verify.sandbox.kmworker.protocol import Channel

        if stop_requested():  # Ctrl-C or SIGTERM: the judgement in flight ends here, nothing new starts
            self._remove_scratch()
            raise stopping_death()
        parent_sock, child_sock = socket.socketpair()
        env = worker_env({"PYTHONDONTWRITEBYTECODE": "1", **self.limits.extra_env})
        device = self.device
        if device.startswith("cuda:"):
            env["CUDA_VISIBLE_DEVICES"] = device.split(":", 1)[1]
            device = "cuda"
        args = ["--role", self.role, "--device", device,
                *(["--defer-device"] if defer_device else []), *limit_args(self.limits)]
        if not self.keep_scratch:  # a worker whose parent died (nobody left to remove it) removes it itself
            args.append("--own-scratch")  # its working directory at start: no variable or argument names the path
        prefix: list[str] = []
        if self.role == "reference":
            args += ["--nondumpable"] if self.plan.nondumpable_reference else []
        else:  # candidate code runs here (compile: static initializers, build scripts)
            prefix = list(self.plan.prefix)
            args += self.plan.worker_args()
            for path in isolation.writable_paths(self.limits.writable):
                args += ["--writable", path]
            tmp = self.scratch / "tmp"  # compilers and tempfile write here, inside what it may write
            tmp.mkdir(exist_ok=True)
            env.update(TMPDIR=str(tmp))
            env.update(isolation.candidate_caches(str(tmp)))
            if self.role == "candidate":  # every GOT slot bound at load: the parent watches them (got_watch.py)
                env.update(LD_BIND_NOW="1")
        self._pid = 0
        self.proc = None
        with open(self.log_path, "wb") as out:
            server = forkserver.server_for([sys.executable, *SAFE_PATH, "-m", "kmworker.zygote"], env,
                                           self.plan.namespaces if prefix else ()) \
                if forkserver.enabled(self.plan.device_type) else None
            if server is not None:  # a fork of a process that has imported torch: the same worker, ~15 ms to start
                try:
                    self.proc = server.spawn(args, env, self.scratch, child_sock, parent_sock, out.fileno())
                except forkserver.ForkServerError as exc:
                    log.warning("%s worker started without the fork server: %s", self.role, exc)
                    parent_sock.close()  # its setup may be in the pair already: a fresh worker gets a clean one
                    child_sock.close()
                    parent_sock, child_sock = socket.socketpair()
            if self.proc is None:
                self.proc = subprocess.Popen(
                    [*prefix, sys.executable, *SAFE_PATH, "-m", "kmworker", "--fd", str(child_sock.fileno()), *args],
                    pass_fds=(child_sock.fileno(),), cwd=self.scratch, env=env, stdin=subprocess.DEVNULL,
                    stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                )
        self.isolation = list(self.plan.namespaces) if prefix else []
        child_sock.close()
        record_worker(self.scratch, self.proc.pid)
        _LIVE.add(self)
        if stop_requested():  # the stop came while it started, after the handler's sweep of _LIVE: it goes too
            self.kill()
            raise stopping_death()
        self.channel = Channel(parent_sock)
        self.deferred = defer_device

    def activate(self, timeout: float = 120.0) -> dict:
        """A worker spawned with `defer_device`: let it set up its device and wait until it is ready (at once when it
        already is: a spare brought up ahead, `DeviceSlot.ready_spare`)."""
        if self.ready:
            return self.env
        if self.deferred:
            try:
                self.channel.send({"op": "begin"})
            except OSError as exc:
                raise self._died(f"could not start the spare {self.role} worker: {exc}") from exc
            self.deferred = False
        return self._ready(timeout)

    def _ready(self, timeout: float) -> dict:

        try:
            hello = self._wait(timeout, "start")
        except WorkerDied as exc:
            if stop_requested():
                raise
            raise WorkerStartFailed(exc.kind, exc.detail) from exc
        self.env = hello.get("env", {})
        self.isolation = sorted({*self.isolation, *(str(x) for x in hello.get("isolation", []))})
        watched = hello.get("watched")  # sent before any candidate code ran here: where the worker's C entry points are
        self.watched = [(str(w[0])[:160], w[1], w[2]) for w in watched[:512] if isinstance(w, list) and len(w) == 3
                        and isinstance(w[1], int) and isinstance(w[2], int) and 0 < w[2] <= 4096] \
            if isinstance(watched, list) else []
        self.ready = True
        return self.env

    @property
    def pid(self) -> int:
        """The worker's own process id as this process sees it (the child of `unshare` when that forks); 0 when it is
        not running."""
        if self.proc is None:
            return 0
        if not self.plan.forks or not self.plan.prefix or self.role == "reference":
            return self.proc.pid
        for _ in range(200):  # `unshare` forks the worker right after it starts
            if self._pid or self.proc.poll() is not None:
                break
            kids = isolation.children(self.proc.pid)
            self._pid = kids[0] if kids else 0
            if not self._pid:
                time.sleep(0.005)
        return self._pid or self.proc.pid

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None and not self.poisoned

    def call(self, op: str, timeout: float, lend_device: bool = False, **args) -> dict:
        """One request and its reply, the device held shared around it (`hold`). `lend_device` (trusted workers only):
        the worker gets the lock file as `device_lock` and holds it itself (`DeviceHold.lend`), where it can be lent."""
        if not self.alive:
            raise WorkerDied("crash", f"{self.role} worker is not running")
        calls_log.debug("%s %s", self.role, op)
        lent = self.hold.lend() if lend_device and self.hold is not None else None
        if lent is not None:
            args["device_lock"] = lent
        with self.hold.shared() if self.hold is not None and lent is None else contextlib.nullcontext():
            try:
                self.channel.send({"op": op, "args": args})
            except OSError as exc:
                raise self._died(f"could not send {op}: {exc}") from exc
            reply = self._wait(timeout, op)
        if not reply.get("ok"):
            error = reply.get("error", {})
            if error.get("cuda"):
                self.poisoned = True  # a CUDA context that saw an error is never reused
            raise WorkerError(error)
        return reply["result"]  # the payload alone: protocol keys never leak into typed results

    def _wait(self, timeout: float, what: str) -> dict:
        start = time.monotonic()
        deadline, waited = start + timeout, runclock.waits(self.pid)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:  # a limit on the worker's own work: time a loaded machine held it up is added on
                held = runclock.load_delay_s(self.pid, waited)
                deadline = start + min(timeout + held, LOAD_GRACE * timeout)
                remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.kill()
                load = f" ({held:.0f}s of it waiting for a CPU on a loaded machine)" if held >= 1 else ""
                raise WorkerDied("timeout", f"{self.role} worker exceeded {timeout:.0f}s during {what}{load}")
            if self.channel.poll(min(remaining, 0.25)):
                try:
                    return self.channel.recv()
                except (EOFError, OSError) as exc:
                    raise self._died(f"{self.role} worker died during {what}") from exc
                except Exception as exc:  # noqa: BLE001 - a message we refuse to decode is an attack or corruption
                    self.kill()
                    raise WorkerDied("crash", f"undecodable message from {self.role} worker: {exc}") from exc
            if self.proc.poll() is not None and not self.channel.poll(0):
                raise self._died(f"{self.role} worker exited during {what}")
            if self.limits.rss_bytes and _rss(self.pid) > self.limits.rss_bytes:
                self.kill()
                raise WorkerDied("resource", f"{self.role} worker exceeded {self.limits.rss_bytes >> 30} GiB resident memory")

    def _died(self, detail: str) -> WorkerDied:
        code = self.proc.wait(timeout=30) if self.proc else None
        self.kill()
        if code is not None and code < 0:
            sig = signal.Signals(-code).name
            kind = "resource" if sig == "SIGKILL" else "crash"
            return WorkerDied(kind, f"{detail}: killed by {sig}")
        tail = self.output_tail(400).strip().splitlines()[-3:]
        return WorkerDied("crash", f"{detail}: exit status {code}" + (f" ({' / '.join(tail)})" if tail else ""))

    def output_tail(self, limit: int = 4000) -> str:
        try:
            data = self.log_path.read_bytes()
        except OSError:
            return self._tail[-limit:]
        return data[-limit:].decode("utf-8", "replace")

    def kill(self) -> None:
        self.poisoned = True
        if self.proc is not None:  # what it started, orphans included (its subreaper kept them), before it goes
            isolation.kill_tree(self.proc.pid)
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()
        elif self.proc is not None:
            try:  # the leader is gone, but children it left in its group are not
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if self.channel is not None:
            self.channel.close()
        self._remove_scratch()

    def _remove_scratch(self) -> None:
        """A dead worker's scratch directory goes (its output tail is kept) unless `keep_scratch` asks otherwise."""
        if self.keep_scratch or not self.scratch.exists():
            return
        self._tail = self.output_tail(16_000)
        shutil.rmtree(self.scratch, ignore_errors=True)
        forget_scratch(self.scratch)

    def close(self) -> None:
        """Ask a ready worker to exit, then make sure it is gone. One that has not greeted (still importing torch, or
        a spare waiting for `begin`) is killed at once: it reads the request only after its imports, so waiting for it
        would hold up closing a batch's verifier (5 s on the H200 for a spare launched near the end)."""
        if self.alive and self.ready:
            try:
                isolation.kill_tree(self.pid)  # processes it left behind would be orphaned to init by its exit
                self.channel.send({"op": "exit"})
                self._wait(5.0, "exit")
            except (WorkerDied, OSError):
                pass
        self.kill()
