"""A fork server for workers: `python -m kmworker.zygote --fd N [--spaces userns,netns,pidns]` (stdlib and torch).

A worker's start is nearly all `import torch` (1.4 s of CPU idle, 4-8 s of wall on a loaded two-core machine), paid
again for every compile and every candidate. This process pays it once: it imports what a worker imports, runs no
candidate code and no torch operation, and forks a worker for each request from its parent (the verifier,
`kernelmosaic.verify.forkserver`). Each fork becomes exactly the process `python -m kmworker ...` would have been:

- its own session and process group, its output log as stdout and stderr, nothing on stdin, every other descriptor
  closed (this server's socket first: a candidate must never ask for processes of its own outside its namespaces);
- the environment the request names, and nothing of this server's: the C environment block is replaced before
  any worker code runs, and `tempfile`'s cached folder is forgotten so it is read again from that environment;
- the namespaces this server was started for, entered by the fork itself (`unshare(2)`: a user namespace with
  root mapped to the caller, a network namespace, a PID namespace whose init it forks, with a mount namespace
  and its own /proc), as `unshare --user --map-root-user --net --pid --fork --kill-child --mount --mount-proc` does:
  the first fork stays outside, waits for the worker and exits as it did (killed by the same signal), and the
  worker dies with it;
- then the worker's own start (`kmworker.__main__.main`): its limits, Landlock, subreaper and capabilities applied
  to itself, all from the one thread a fork has, before any candidate code.

A fork failing to enter a namespace exits (status 70) without running the worker: nothing runs with less
isolation than the parent recorded. The server checks at its start that a fork can enter them and says so in its
greeting; the parent does not use a server that cannot.

Children are reaped only when the parent asks for a status (`status`), so a worker's process id is never reused
while the parent may still signal it.

Requests (one JSON object per SOCK_SEQPACKET message; `spawn` carries the worker's socket and log descriptors):
`{"op": "spawn"}` -> `{"pid": n}` (the first fork). What the worker is to be (its arguments without `--fd`, its
environment, its folder) the fork reads from the worker's own socket, where the verifier wrote it: this server holds
no scratch path or environment of any worker, so no later fork inherits one in its memory.
`{"op": "status", "pid": n}` -> `{"code": None | int}` (None: running; negative: killed by that signal).
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import socket
import struct
import sys
import traceback

_CLONE_NEWNS, _CLONE_NEWUSER, _CLONE_NEWPID, _CLONE_NEWNET = 0x00020000, 0x10000000, 0x20000000, 0x40000000
_MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_REC, _MS_PRIVATE = 2, 4, 8, 1 << 14, 1 << 18
_PR_SET_PDEATHSIG = 1
NAMESPACE_FAILED = 70
"""Exit status of a fork that could not enter its namespaces (ran no worker code)."""
_MAX_MESSAGE = 1 << 20

_libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def enter_namespaces(spaces: list[str]) -> int:
    """Enter `spaces` from this (single-threaded) process. With "pidns" it forks: returns the child's pid in the
    process that stays outside (which must wait for it) and 0 in the child, the new namespace's init; without,
    returns 0."""
    uid, gid = os.getuid(), os.getgid()
    flags = (_CLONE_NEWUSER if "userns" in spaces else 0) | (_CLONE_NEWNET if "netns" in spaces else 0) \
        | (_CLONE_NEWPID | _CLONE_NEWNS if "pidns" in spaces else 0)
    if not flags:
        return 0
    _check(_libc.unshare(ctypes.c_int(flags)), "unshare")
    if "userns" in spaces:  # root inside is this uid outside, and nothing else is mapped
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"0 {uid} 1")
        _write("/proc/self/gid_map", f"0 {gid} 1")
    if "pidns" not in spaces:
        return 0
    _check(_libc.mount(b"none", b"/", None, ctypes.c_ulong(_MS_REC | _MS_PRIVATE), None), "mount --make-rprivate /")
    pid = os.fork()
    if pid:
        return pid
    # the namespace's init: dies with the process outside (`--kill-child`), and sees its own /proc
    _check(_libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl(PR_SET_PDEATHSIG)")
    _check(_libc.mount(b"proc", b"/proc", b"proc", ctypes.c_ulong(_MS_NOSUID | _MS_NODEV | _MS_NOEXEC), None),
           "mount /proc")
    return 0


def _relay(child: int) -> None:
    """The process outside the PID namespace: wait for its init and end as it ended. A worker's holds no descriptor
    but 0-2 by now (`_become_worker` closed the rest)."""
    _, status = os.waitpid(child, 0)  # an interrupted wait is retried by Python itself
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


def _read_setup(fd: int) -> dict:
    """The worker's arguments, environment and folder, sent by the verifier on the worker's own socket (a 4-byte
    big-endian length, then JSON) ahead of the worker's first message: this server never sees them."""
    def exactly(n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = os.read(fd, n - len(data))
            if not chunk:
                raise EOFError("the verifier closed the worker's socket before its setup")
            data += chunk
        return data

    (size,) = struct.unpack(">I", exactly(4))
    if size > _MAX_MESSAGE:
        raise ValueError(f"a setup of {size} bytes")
    return json.loads(exactly(size))


def _become_worker(server: socket.socket, sock_fd: int, log_fd: int, spaces: list[str], ready: int) -> None:
    """In the first fork: never returns. `ready` is closed once this process leads its own session."""
    try:
        os.close(server.detach())  # first: nothing after this can reach the server
        os.setsid()
        os.close(ready)
        os.dup2(log_fd, 1)
        os.dup2(log_fd, 2)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        keep = os.dup(sock_fd) if sock_fd < 3 else sock_fd
        for fd in os.listdir("/proc/self/fd"):  # every descriptor but 0-2 and the worker's socket
            if int(fd) > 2 and int(fd) != keep:
                try:
                    os.close(int(fd))
                except OSError:
                    pass
        request = _read_setup(keep)
        os.chdir(request["cwd"])
        try:
            inner = enter_namespaces(spaces)
        except OSError as exc:
            print(f"kmworker.zygote: could not enter the namespaces {spaces}: {exc}", file=sys.stderr, flush=True)
            os._exit(NAMESPACE_FAILED)
        if inner:
            os.close(keep)
            _relay(inner)
        os.environ.clear()
        os.environ.update(request["env"])
        import tempfile

        tempfile.tempdir = None  # read again from TMPDIR (the imports here cached the server's)
        _repoint_import_time_paths()
        sys.argv = ["kmworker", "--fd", str(keep), *request["argv"]]
        from kmworker.__main__ import main

        main()
        os._exit(0)
    except BaseException:  # noqa: BLE001 - nothing may return into the server's loop
        try:
            traceback.print_exc()
            sys.stderr.flush()
        finally:
            os._exit(1)


def _repoint_import_time_paths() -> None:
    """Paths a module computed from the environment when this server imported it, computed again from the worker's
    (found by scanning every loaded module's globals for the server's temporary folder after its imports: dynamo's
    disk cache is the one, `torch._dynamo.package.DynamoCache`, under Inductor's cache folder)."""
    package = sys.modules.get("torch._dynamo.package")
    if package is not None and hasattr(package, "DiskDynamoCache") and hasattr(package, "cache_dir"):
        package.DynamoCache = package.DiskDynamoCache(os.path.join(package.cache_dir(), "dynamo"))


def _probe(spaces: list[str]) -> str:
    """Why a fork cannot enter `spaces` here ("" when it can)."""
    pid = os.fork()
    if pid == 0:
        try:
            inner = enter_namespaces(spaces)
        except OSError:
            os._exit(NAMESPACE_FAILED)
        if inner:
            _relay(inner)
        os._exit(0 if os.getpid() == 1 or "pidns" not in spaces else 3)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    return "" if code == 0 else f"a fork could not enter {','.join(spaces)} (exit status {code})"


def _status(pid: int) -> int | None:
    try:
        got, status = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return -int(signal.SIGKILL)  # not ours or already reaped: reported as gone
    return os.waitstatus_to_exitcode(status) if got else None


def main() -> None:
    args = sys.argv[1:]
    fd = int(args[args.index("--fd") + 1])
    spaces = [s for s in args[args.index("--spaces") + 1].split(",") if s] if "--spaces" in args else []
    server = socket.socket(fileno=fd)
    # what a worker imports before its role (kmworker/__main__.py), so a fork starts with all of it loaded
    import torch  # noqa: F401
    import torch._dynamo  # noqa: F401
    import torch.profiler  # noqa: F401
    import torch.utils.cpp_extension  # noqa: F401
    from kmworker import __main__ as worker_main  # noqa: F401
    from kmworker import (  # noqa: F401
        candidate,
        common,
        compiler,
        confine,
        cwatch,
        protocol,
        reference,
        shared,
    )

    why = _probe(spaces) if spaces else ""
    server.send(json.dumps({"ready": True, "pid": os.getpid(), "spaces": spaces, "unusable": why}).encode())
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(server, _MAX_MESSAGE, 4)
        except OSError:
            os._exit(0)
        if not data:  # the parent closed its end: it is gone or done
            os._exit(0)
        request = None
        try:
            request = json.loads(data)
            if request.get("op") == "spawn":
                if len(fds) != 2:
                    raise ValueError(f"spawn carries {len(fds)} descriptors, not 2 (socket, log)")
                session, ready = os.pipe()
                pid = os.fork()
                if pid == 0:
                    os.close(session)
                    _become_worker(server, fds[0], fds[1], spaces, ready)
                os.close(ready)
                os.read(session, 1)  # its end closes once it leads its own session: a kill of its group reaches it
                os.close(session)
                reply: dict = {"pid": pid}
            elif request.get("op") == "status":
                reply = {"code": _status(int(request["pid"]))}
            else:
                raise ValueError(f"unknown op {request.get('op')!r}")
        except Exception as exc:  # noqa: BLE001 - answered, the server goes on
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        finally:
            for received in fds:
                os.close(received)
        reply["id"] = request.get("id", 0) if isinstance(request, dict) else 0
        server.send(json.dumps(reply).encode())


if __name__ == "__main__":
    main()
