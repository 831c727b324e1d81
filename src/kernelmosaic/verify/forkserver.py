"""Workers forked from a server that has already imported torch (`kmworker.zygote`), instead of each started as a
new interpreter: a worker's start falls from an `import torch` (1.4 s of CPU idle, 4-8 s of wall on a loaded
two-core machine) to a fork (about 15 ms), for every compile and every candidate.

What a forked worker is, and why it is the same process a fresh start would be (its environment, descriptors,
session, namespaces, confinement), is said in `kmworker/zygote.py`. This side starts one server per distinct
start-time environment and namespace set (a server's environment is what libraries read at import; each worker
still gets its own full environment), hands it each worker's socket and log, and gives the pool a handle with the
part of `subprocess.Popen` it uses (`pid`, `poll`, `wait`).

Used for CPU workers by default. `KERNELMOSAIC_FORK_SERVER` says where: `cpu` (default), `all` (CUDA workers too:
the server never touches the device, so a fork starts CUDA afresh), or `off`. A server that cannot start, or whose
forks cannot enter the namespaces, is not used: workers then start as before (`unshare ... python -m kmworker`)
and the log says why.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from pathlib import Path

from kernelmosaic.verify import isolation
from kernelmosaic.verify.scratch import forget_scratch, make_scratch, record_worker

__all__ = ["ForkServer", "ForkedProcess", "server_for", "enabled", "close_all", "SWITCH"]

log = logging.getLogger(__name__)

SWITCH = "KERNELMOSAIC_FORK_SERVER"
_START_TIMEOUT_S = 180.0
_REPLY_TIMEOUT_S = 60.0
_POLL_S = 0.2
PER_WORKER_ENV = ("TMPDIR", *isolation.candidate_caches("/"))
"""Variables each worker gets its own value of, read by libraries when used (not at import): not part of a
server's key."""


def enabled(device_type: str) -> bool:
    raw = os.environ.get(SWITCH, "cpu").strip().lower()
    if raw not in ("cpu", "all", "off"):
        raise ValueError(f"{SWITCH}={raw!r}: expected cpu, all or off")
    # os.fork, unshare(2) and SOCK_SEQPACKET: Linux only
    return sys.platform == "linux" and (raw == "all" or (raw == "cpu" and device_type == "cpu"))


class ForkServerError(Exception):
    """The server could not start or answer; the caller starts its worker the ordinary way."""


class ForkServer:
    def __init__(self, command: list[str], env: dict[str, str], spaces: tuple[str, ...]) -> None:
        self.spaces = spaces
        self._lock = threading.RLock()
        self._forks: weakref.WeakSet[ForkedProcess] = weakref.WeakSet()
        self._next = 0
        self._kept: dict[int, dict] = {}
        # what its imports may cache as the temporary folder (a fork reads TMPDIR again), removed with it
        self.scratch = make_scratch("forkserver", None, False)  # a stop removes it with the workers' (scratch.py)
        env = {**env, "TMPDIR": str(self.scratch)}
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._log = tempfile.TemporaryFile(prefix="km-forkserver-", suffix=".log")  # no name: nothing to leave
        try:
            self.proc = subprocess.Popen(
                [*command, "--fd", str(theirs.fileno()), *(["--spaces", ",".join(spaces)] if spaces else [])],
                pass_fds=(theirs.fileno(),), cwd="/", env=env, stdin=subprocess.DEVNULL, stdout=self._log,
                stderr=subprocess.STDOUT, start_new_session=True)
        finally:
            theirs.close()
        record_worker(self.scratch, self.proc.pid)
        self._sock = ours
        self._sock.settimeout(_START_TIMEOUT_S)
        try:
            hello = self._recv()
        except (OSError, ValueError) as exc:
            self.close()
            raise ForkServerError(f"the fork server did not start: {exc}; {self.output_tail()}") from exc
        self._sock.settimeout(_POLL_S)
        if hello.get("unusable"):
            self.close()
            raise ForkServerError(str(hello["unusable"]))

    def _recv(self) -> dict:
        data = self._sock.recv(1 << 20)
        if not data:
            raise ValueError("it closed its socket")
        return json.loads(data)

    def _ask(self, request: dict, fds: list[int] | None = None) -> dict:
        """One request and its reply. Re-entrant: a stop's signal handler (verify/stopping.py) that kills workers can
        ask for a status while this thread waits for another reply; replies carry their request's id, one read for
        another request is kept for it, and a wait looks at what was kept every `_POLL_S`."""
        with self._lock:
            self._next += 1
            ident = self._next
            message = json.dumps({**request, "id": ident}).encode()
            deadline = time.monotonic() + _REPLY_TIMEOUT_S
            try:
                if fds:
                    socket.send_fds(self._sock, [message], fds)
                else:
                    self._sock.send(message)
                while ident not in self._kept:
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"no reply in {_REPLY_TIMEOUT_S:.0f}s")
                    try:
                        reply = self._recv()
                    except TimeoutError:
                        continue
                    self._kept[int(reply.get("id", 0))] = reply
                reply = self._kept.pop(ident)
            except (OSError, ValueError) as exc:
                self.close()
                raise ForkServerError(f"the fork server stopped answering: {exc}; {self.output_tail()}") from exc
        if "error" in reply:
            raise ForkServerError(f"the fork server refused: {reply['error']}")
        return reply

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None and self._sock.fileno() >= 0

    def spawn(self, argv: list[str], env: dict[str, str], cwd: Path, worker_end: socket.socket,
              parent_end: socket.socket, log_fd: int) -> ForkedProcess:
        """Fork a worker on the socket pair (`worker_end` is handed over, `parent_end` stays here). Its arguments,
        environment and folder go on the pair itself, ahead of everything else, never through the server."""
        setup = json.dumps({"argv": argv, "env": env, "cwd": str(cwd)}).encode()
        parent_end.sendall(struct.pack(">I", len(setup)) + setup)
        reply = self._ask({"op": "spawn"}, [worker_end.fileno(), log_fd])
        forked = ForkedProcess(int(reply["pid"]), self)
        self._forks.add(forked)
        return forked

    def forks_alive(self) -> bool:
        """Whether a fork of this server may still be running (its status not yet taken)."""
        return any(f.returncode is None for f in list(self._forks))

    def status(self, pid: int) -> int | None:
        code = self._ask({"op": "status", "pid": pid})["code"]
        return None if code is None else int(code)

    def output_tail(self, limit: int = 2000) -> str:
        try:
            size = os.fstat(self._log.fileno()).st_size
            return os.pread(self._log.fileno(), limit, max(0, size - limit)).decode("utf-8", "replace").strip()
        except (OSError, ValueError):
            return ""

    def close(self) -> None:
        try:
            self._sock.close()
        except OSError:
            pass
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        self._log.close()
        shutil.rmtree(self.scratch, ignore_errors=True)
        forget_scratch(self.scratch)


class ForkedProcess:
    """A worker forked by a server: the part of `subprocess.Popen` the pool uses. The server reaps it only when asked
    here, so `pid` stays this process's until `poll` has returned its status; until its pid file descriptor says it
    has ended, `poll` asks the server nothing."""

    def __init__(self, pid: int, server: ForkServer) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self._server = server
        try:
            self._pidfd = os.pidfd_open(pid)
        except (AttributeError, OSError):  # no pidfd here: ask the server every time
            self._pidfd = -1

    def _running(self) -> bool:
        if self._pidfd < 0:
            return False
        readable, _, _ = select.select([self._pidfd], [], [], 0)
        return not readable

    def poll(self) -> int | None:
        if self.returncode is not None:
            return self.returncode
        if self._running():
            return None
        try:
            self.returncode = self._server.status(self.pid)
        except ForkServerError:  # the server is gone, and with it the zombie: the process is gone when /proc says so
            if self._pidfd >= 0 or not os.path.exists(f"/proc/{self.pid}"):
                self.returncode = -int(signal.SIGKILL)
        if self.returncode is not None and self._pidfd >= 0:
            os.close(self._pidfd)
            self._pidfd = -1
        return self.returncode

    def __del__(self) -> None:
        if getattr(self, "_pidfd", -1) >= 0:
            os.close(self._pidfd)

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:  # not yet reaped (the server reaps on `poll` alone): the pid is still this process's
            os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        pause = 0.001
        while self.poll() is None:
            if deadline is not None and time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(f"worker {self.pid}", timeout or 0)
            time.sleep(pause)
            pause = min(pause * 2, 0.05)
        return self.returncode  # type: ignore[return-value]


MAX_SERVERS = 4
"""Servers kept at once (each holds torch's import, ~350 MB resident): a process whose workers' start-time environment
keeps changing (tests that set variables) does not gather one per variant."""
_SERVERS: dict[tuple, ForkServer] = {}
_REFUSED: set[tuple] = set()
_GUARD = threading.Lock()


def server_for(command: list[str], env: dict[str, str], spaces: tuple[str, ...]) -> ForkServer | None:
    """The running server for this start-time environment and namespace set, started on first use; None where one
    cannot serve here (said once in the log)."""
    base = {k: v for k, v in env.items() if k not in PER_WORKER_ENV}
    key = (tuple(command), tuple(sorted(base.items())), spaces)
    with _GUARD:
        server = _SERVERS.pop(key, None)
        if server is not None and server.alive:
            _SERVERS[key] = server  # the most recently used last
            return server
        if key in _REFUSED:
            return None
        if server is not None:
            server.close()
        _make_room()
        try:
            server = ForkServer(command, base, spaces)
        except (ForkServerError, OSError) as exc:
            log.warning("workers start without a fork server: %s", exc)
            _REFUSED.add(key)
            return None
        _SERVERS[key] = server
        return server


def _make_room() -> None:
    """At most `MAX_SERVERS` servers: the least recently used without a live fork goes (one with a live fork stays,
    as only it can report that fork's exit status)."""
    for key, server in list(_SERVERS.items()):
        if len(_SERVERS) < MAX_SERVERS:
            return
        if not server.forks_alive():
            del _SERVERS[key]
            server.close()


def _forget_in_child() -> None:
    """A fork of this process (multiprocessing, a library's worker pool) must not talk to its parent's servers: their
    replies would go to whichever process reads first. It forgets them, unclosed (they are its parent's), and starts its
    own when it needs one."""
    _SERVERS.clear()
    _REFUSED.clear()


os.register_at_fork(after_in_child=_forget_in_child)


@atexit.register
def close_all() -> None:
    """End every server. Takes no lock: it runs in a stop's signal handler (verify/stopping.py), which may interrupt
    this very thread inside `server_for` while it waits for a new server's greeting."""
    servers = list(_SERVERS.values())
    _SERVERS.clear()
    for server in servers:
        server.close()

