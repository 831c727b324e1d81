"""Worker entry point: `python -m kmworker --fd N --role reference|candidate|compile --device D`.

Serves requests from the parent on the inherited socket until told to exit. Every request is answered with
`{"ok": True, "result": {...}}` or `{"ok": False, "error": {...}}`; a failure that kills the process is seen by the parent as
the socket closing, and classified there from the exit status.
"""

from __future__ import annotations

import argparse
import faulthandler
import os
import signal
import socket
import sys


def main() -> None:
    parser = argparse.ArgumentParser(prog="kmworker")
    parser.add_argument("--fd", type=int, required=True)
    parser.add_argument("--role", choices=["reference", "candidate", "compile"], required=True)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--defer-device", action="store_true",
                        help="import, then wait for `begin` before touching the device (a spare started early)")
    parser.add_argument("--own-scratch", action="store_true",
                        help="the working directory at start is this worker's scratch folder: remove it if orphaned")
    parser.add_argument("--landlock", action="store_true", help="write only beneath the --writable folders")
    parser.add_argument("--writable", action="append", default=[])
    parser.add_argument("--no-tcp", action="store_true", help="with --landlock: no TCP bind or connect")
    parser.add_argument("--scope", action="store_true", help="with --landlock: no signal or abstract socket outside")
    parser.add_argument("--subreaper", action="store_true", help="orphans of its descendants stay in its tree")
    parser.add_argument("--drop-caps", action="store_true", help="drop every capability")
    parser.add_argument("--tasks-writable", action="store_true",
                        help="with --landlock: its own /proc/self/task files stay writable (CUDA's start needs them)")
    parser.add_argument("--seal-tasks", action="store_true",
                        help="with --tasks-writable: once the device has started, a second Landlock layer without them")
    parser.add_argument("--nondumpable", action="store_true", help="a reference worker: not dumpable")
    parser.add_argument("--rlimit-as", type=int, default=0, help="address-space limit in bytes (0: none)")
    parser.add_argument("--nice", type=int, default=0, help="added to its CPU niceness (its children inherit it)")
    args = parser.parse_args()
    _limit(args.rlimit_as, args.nice)  # before torch, before any candidate code (verify/pool.py: limit_args)
    sock = socket.socket(fileno=args.fd)
    # SIGUSR2 writes every thread's Python stack to the worker's log (its stdout and stderr): where a stuck
    # judgement waits, asked from outside (scripts/gpu/gpu-pipeline does it to every worker left when a step ends)
    faulthandler.register(signal.SIGUSR2, all_threads=True)
    from .confine import confine

    scratch = os.getcwd() if args.own_scratch else ""  # read before any candidate code runs here
    # Before torch starts its first thread (protocol imports it): Landlock binds this thread and those started after.
    here = os.getcwd()  # its scratch folder, writable by it: named by no argument or variable others can read
    writable, removable = [here, *args.writable], [os.path.dirname(here)] if args.own_scratch else []
    isolation = confine(args.role if args.role == "reference" and args.nondumpable else "worker",
                        writable, args.landlock, args.no_tcp, args.scope, args.subreaper, args.drop_caps,
                        removable=removable, tasks_writable=args.tasks_writable)
    args.sealing = (writable, removable) if args.seal_tasks and "landlock-fs" in isolation else None
    import torch  # imported before any candidate code, so its identity snapshot is clean
    import torch._dynamo  # noqa: F401 - importing dynamo rewraps torch.manual_seed; do it before the snapshot
    import torch.profiler  # noqa: F401

    from .protocol import Channel
    if args.role != "reference":  # a `load_inline` candidate's first line; setuptools with it (0.08-0.13 s on a CPU)
        import torch.utils.cpp_extension  # noqa: F401

    try:
        orphaned = _serve(Channel(sock), args, isolation)
    except (BrokenPipeError, ConnectionResetError):  # a greeting or a reply found the parent gone
        orphaned = True
    if orphaned:
        _orphaned(scratch)
    _end()


def _limit(address_space: int, nice: int) -> None:
    """No core file; at most `address_space` bytes of address space (0: no limit); `nice` added to its niceness."""
    import resource

    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if address_space:
        resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))
        mapped = _mapped_bytes()  # a worker forked with torch loaded (kmworker/zygote.py) has it mapped already
        if mapped > address_space:
            raise SystemExit(f"kmworker: the address-space limit of {address_space >> 20} MiB is below what Python "
                             f"and torch have mapped at the worker's start ({mapped >> 20} MiB)")
    if nice:
        os.nice(nice)


def _mapped_bytes() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _end() -> None:
    """End the process without the interpreter's teardown (torch's and every module's: 0.5-1.5 s of CPU, which the
    parent waits through when it closes a worker) and without running exit handlers: none of the worker's needs one,
    and a candidate's own (`atexit.register` in its top level) never runs after its judgement."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(0)


def _serve(channel, args, isolation: list[str]) -> bool:
    """Serve the parent until it asks this worker to exit (False) or its channel closes without asking (True: the
    parent is gone)."""
    import torch

    from .common import describe_error, probe_env
    from .cwatch import watched_regions  # noqa: I001 (before the role's integrity snapshot lists the worker's modules)
    from .shared import MAILBOX

    device = args.device
    if args.defer_device:  # a spare: Python and torch are loaded; the device is touched only when it is handed out
        request = _recv_or_none(channel)
        if request is None:
            return True
        if request.get("op") != "begin":
            channel.send({"ok": True})
            return False
    if device.startswith("cuda"):
        torch.cuda.set_device(torch.device(device).index or 0)
        torch.cuda.init()
        if args.sealing is not None:  # CUDA has started: its context made, its threads named
            from .confine import seal_tasks

            torch.cuda.mem_get_info()
            isolation = [*isolation, *seal_tasks(*args.sealing)]
    role = _make_role(args.role, device)
    channel.send({"ok": True, "ready": True, "pid": os.getpid(), "env": probe_env(device), "isolation": isolation,
                  "watched": watched_regions(device)})
    while True:
        try:
            request = channel.recv()
        except EOFError:
            return True
        op = request.get("op")
        if op == "exit":
            channel.send({"ok": True})
            return False
        MAILBOX.incoming = channel.take_fds()  # large tensors handed over by another worker (kmworker/shared.py)
        try:
            result = _dispatch(role, args.role, op, request.get("args", {}))
            if device.startswith("cuda"):  # nothing of this call left running when the parent lets go of the
                torch.cuda.synchronize()   # device (devlock.py): every stream of this process, not only the current
            channel.attach(MAILBOX.outgoing)
            channel.send({"ok": True, "result": result})
        except BaseException as exc:  # noqa: BLE001 - reported to the parent, which decides the status
            channel.attach([])
            channel.send({"ok": False, "error": describe_error(exc)})
        finally:
            _close_all(MAILBOX.incoming + MAILBOX.outgoing)
            MAILBOX.incoming, MAILBOX.outgoing = [], []
        sys.stdout.flush()
        sys.stderr.flush()


def _close_all(fds: list[int]) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


def _orphaned(scratch: str) -> None:
    """The channel closed without an `exit` request, or a greeting or reply could not be sent: the parent is gone (a
    parent that closes a worker asks it to exit first, or kills it), so nobody else will remove this worker's scratch
    directory (its working directory at start, with `--own-scratch`)."""
    import shutil

    if scratch:
        os.chdir("/")
        shutil.rmtree(scratch, ignore_errors=True)


def _recv_or_none(channel):
    try:
        return channel.recv()
    except EOFError:
        return None


def _make_role(name: str, device: str):
    if name == "reference":
        from .reference import ReferenceRole

        return ReferenceRole(device)
    if name == "candidate":
        from .candidate import CandidateRole

        return CandidateRole(device)
    return None


def _dispatch(role, role_name: str, op: str, args: dict) -> dict:
    if role_name == "compile":
        from .compiler import build_one, compile_candidate

        ops = {"compile": compile_candidate, "build": build_one}
        if op not in ops:
            raise ValueError(f"unknown op {op!r}")
        return ops[op](**args)
    method = getattr(role, op, None)
    if op.startswith("_") or method is None:
        raise ValueError(f"unknown op {op!r} for role {role_name}")
    return method(**args)


if __name__ == "__main__":
    main()
