"""The verifier service speaks only to its owner (issue 36, "the service"): its socket lives in a per-user runtime
folder the client checks before connecting, the service refuses any process that is not its owner's or that descends
from a worker, and the verdict of a candidate whose processes try to reach it is judged as if they had not.

Attacks run as candidates would run them: module-level code in a `load_inline` candidate, which executes in the
compile worker and again in the candidate worker, with static checks off so that only the service's checks stand in
the way. Folders and sockets of "another user" are made here as root and given to uid 65534."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from kernelmosaic.launch import forward
from kernelmosaic.paths import runtime_dir, socket_path
from kernelmosaic.verify import Verifier, VerifyConfig
from kernelmosaic.verify.peer import peer_refusal
from kernelmosaic.verify.service import serve
from kernelmosaic.verify.service_client import remote_verify, service_available
from kernelmosaic.verify.service_errors import ServiceUntrusted

from .kit import PROBLEM_ADD_RELU, candidate, write

OTHER_UID = 65534
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="making files of another user needs root")


@pytest.fixture
def private_runtime(monkeypatch):
    """`$XDG_RUNTIME_DIR` of this test alone (0700, short: a socket path has at most 107 bytes), so its folders can
    be spoiled without touching anyone's."""
    base = Path(tempfile.mkdtemp(prefix="kmrt-", dir="/tmp"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(base))
    assert runtime_dir() == base / "kernelmosaic"
    yield base / "kernelmosaic"
    shutil.rmtree(base, ignore_errors=True)


class _StandIn:
    """A listener at the service's socket path that counts the connections it gets (a forged service)."""

    def __init__(self, path: Path) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(path))
        self.sock.listen(4)
        self.sock.setblocking(False)

    def connections(self) -> int:
        count = 0
        while True:
            try:
                conn, _ = self.sock.accept()
            except BlockingIOError:
                return count
            conn.close()
            count += 1


@as_root
@pytest.mark.parametrize("spoil", ["folder-of-another-user", "folder-0755", "socket-of-another-user", "socket-0666"])
def test_the_client_refuses_a_folder_or_socket_that_is_not_its_users_alone(tmp_path, private_runtime, monkeypatch,
                                                                            spoil):
    cache = tmp_path / "cache"
    monkeypatch.setenv("KERNELMOSAIC_CACHE", str(cache))
    private_runtime.mkdir(mode=0o700)
    path = socket_path(cache)
    forged = _StandIn(path)
    os.chmod(path, 0o600)
    if spoil == "folder-of-another-user":
        os.chown(private_runtime, OTHER_UID, OTHER_UID)
    elif spoil == "folder-0755":
        private_runtime.chmod(0o755)
    elif spoil == "socket-of-another-user":
        os.chown(path, OTHER_UID, OTHER_UID)
    else:
        path.chmod(0o666)
    with pytest.raises(ServiceUntrusted, match="not connecting to the verifier service") as refused:
        remote_verify(VerifyConfig(cache_dir=cache, device="cpu"), tmp_path / "p.py", tmp_path / "c.py")
    assert ("uid 65534" in str(refused.value)) == spoil.endswith("another-user"), refused.value
    assert not service_available(cache)
    assert forward(["verify", "p.py", "c.py", "--json"]) is None  # the thin client does not hand its argv over
    assert forged.connections() == 0, "a client connected to a socket that is not its user's alone"
    # and the service does not start there: neither in a folder it does not own nor beside another's socket
    with pytest.raises(RuntimeError, match="65534|0755|0666"):
        serve(cache, stop=threading.Event())


def _accept_and_judge(server: socket.socket, workers: set[int], out: list[str | None]) -> None:
    conn, _ = server.accept()
    with conn:
        out.append(peer_refusal(conn, workers))


def _peer_verdict(tmp_path: Path, client: list[str], workers_of=lambda child: set(), **popen) -> str | None:
    """Start `client` (it connects to a listening socket at argv[-1]), and what `peer_refusal` says of it."""
    path = Path(tempfile.mkdtemp(prefix="kmpeer-", dir="/tmp")) / "peer.sock"
    path.parent.chmod(0o755)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    path.chmod(0o666)
    server.listen(1)
    proc = subprocess.Popen([*client, str(path)], **popen)
    out: list[str | None] = []
    judge = threading.Thread(target=_accept_and_judge, args=(server, workers_of(proc), out))
    judge.start()
    judge.join(60)
    proc.wait(60)
    server.close()
    shutil.rmtree(path.parent, ignore_errors=True)
    assert out, "nobody connected"
    return out[0]


CONNECT = "import socket, sys, time; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[-1]); time.sleep(1)"
SPAWN_AND_CONNECT = ("import subprocess, sys; subprocess.run([sys.executable, '-c', sys.argv[1], sys.argv[-1]], "
                     "check=True)")
NO_NEW_PRIVS = "import ctypes; ctypes.CDLL(None, use_errno=True).prctl(38, 1, 0, 0, 0); " + CONNECT


def test_the_owner_is_served_and_a_process_below_a_worker_is_not(tmp_path):
    assert _peer_verdict(tmp_path, [sys.executable, "-c", CONNECT]) is None
    # a "worker" that starts a child which connects: the walk up from the kernel-reported pid reaches the worker
    why = _peer_verdict(tmp_path, [sys.executable, "-c", SPAWN_AND_CONNECT, CONNECT], workers_of=lambda p: {p.pid})
    assert why is not None and "descends from worker process" in why, why
    # the same child when the process above it is not a worker: served
    assert _peer_verdict(tmp_path, [sys.executable, "-c", SPAWN_AND_CONNECT, CONNECT]) is None


def test_a_process_carrying_a_sandbox_mark_is_refused(tmp_path):
    """no_new_privs, which Landlock needs and which no process can clear, as a worker's sandbox sets it."""
    why = _peer_verdict(tmp_path, [sys.executable, "-c", NO_NEW_PRIVS])
    assert why is not None and "no_new_privs" in why, why


@as_root
@pytest.mark.skipif(not shutil.which("python3", path="/usr/bin:/bin"), reason="no system python for another user")
def test_a_process_of_another_uid_is_refused(tmp_path):
    python = shutil.which("python3", path="/usr/bin:/bin")  # this venv's may sit where uid 65534 cannot go
    why = _peer_verdict(tmp_path, [python, "-c", CONNECT], user=OTHER_UID, cwd="/")
    assert why is not None and f"uid {OTHER_UID}" in why and "answers only its owner" in why, why


ATTACK = '''
import os as _os, socket as _s
def _ask(who):
    try:
        c = _s.socket(_s.AF_UNIX, _s.SOCK_STREAM)
        c.settimeout(20)
        c.connect({path!r})
        try:
            c.sendall(b'{{"op": "device"}}\\n')
        except BrokenPipeError:  # refused and closed before the request was written: the refusal is still queued
            pass
        print(f"service[{{who}}]: {{c.makefile().readline().strip()}}", flush=True)
    except OSError as e:
        print(f"service[{{who}}]: failed {{type(e).__name__}} {{e}}", flush=True)
def _attack():
    _ask("worker")
    r, w = _os.pipe()
    pid = _os.fork()
    if pid == 0:
        _os.close(r)
        _ask("child")
        if _os.fork() == 0:
            _os.setsid()
            if _os.fork() == 0:  # orphaned: its parents exit before it asks
                import time
                time.sleep(0.3)
                _ask("orphan")
            _os._exit(0)
        _os._exit(0)
    _os.close(w)
    _os.read(r, 1)  # end of file once the orphan has asked
    _os.close(r)
    _os.waitpid(pid, 0)
_attack()
'''


@pytest.mark.slow
def test_a_candidates_processes_are_refused_by_the_running_service(tmp_path, build_cache):
    """The service runs (in this process); a candidate, its child and a double-forked orphan of it connect to the
    socket (its path given to the candidate outright). Each is refused before the service reads its request."""
    ready, stop = threading.Event(), threading.Event()
    thread = threading.Thread(target=serve, args=(build_cache,), kwargs={"ready": ready, "stop": stop}, daemon=True)
    thread.start()
    assert ready.wait(30)
    try:
        config = VerifyConfig(device="cpu", trials=2, cache_dir=build_cache, timing=False, compile_baseline=False,
                              run_timeout_s=30, memory_limit_gb=8, static_checks=False)
        attack = ATTACK.format(path=str(socket_path(build_cache)))
        with Verifier(config) as verifier:
            verdict = verifier.verify(write(tmp_path, "p.py", PROBLEM_ADD_RELU),
                                      write(tmp_path, "c.py", candidate("return ext.add_only(a, b)", extra=attack)))
    finally:
        stop.set()
        thread.join(60)
    assert not verdict.accepted  # add_only is wrong: the tail is kept
    lines = [line for text in (verdict.compile.log, verdict.candidate_output_tail) for line in text.splitlines()
             if line.startswith("service[")]
    asked = {line.split("]")[0].removeprefix("service[") for line in lines}
    assert asked == {"worker", "child", "orphan"}, lines
    replies = [line.split(": ", 1)[1] for line in lines]
    assert not any('"ok": true' in r for r in replies), lines  # nothing was served to a candidate's process
    for reply in replies:
        assert reply.startswith("{"), lines  # each connected, and was answered with a refusal
        answer = json.loads(reply)
        assert answer["ok"] is False and answer["kind"] == "declined" and "refused" in answer["error"], reply


def test_no_worker_environment_names_the_socket_or_its_folder(tmp_path, private_runtime, monkeypatch):
    from kernelmosaic.verify.pool import worker_env

    monkeypatch.setenv("KERNELMOSAIC_CACHE", str(tmp_path / "cache"))
    env = worker_env()
    assert "XDG_RUNTIME_DIR" not in env
    leaks = [k for k, v in env.items() if str(private_runtime.parent) in v or "kernelmosaic-" in v]
    assert not leaks, leaks
