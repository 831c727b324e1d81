"""The isolation layers on their own: what the minimum asks, the per-device plans and their override, Landlock as a
worker applies it (writes, TCP, signals), the tree kill, a worker's environment block, and *verified* refusing a
verdict judged without the minimum."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from kernelmosaic.contracts.isolation import MINIMUM, missing
from kernelmosaic.contracts.verdict import Correctness, Env, Stat, Status, Timing, Verdict
from kernelmosaic.contracts.verified import check_candidate
from kernelmosaic.verify import isolation
from kernelmosaic.verify.isolation import kill_tree, plan_for
from kernelmosaic.verify.pool import WORKER_PACKAGE_DIR, Worker, WorkerLimits
from kernelmosaic.verify.sandbox.kmworker.confine import landlock_abi

CPU_FULL = ["userns", "netns", "pidns", "landlock-fs", "landlock-net", "landlock-scope", "subreaper",
            "no-capabilities", "reference-nondumpable"]
CUDA_FULL = ["netns", "landlock-fs", "landlock-net", "landlock-scope", "subreaper", "no-capabilities",
             "reference-nondumpable"]
LANDLOCK = pytest.mark.skipif(landlock_abi() < 6, reason=f"Landlock ABI {landlock_abi()} here; these need 6+")


def test_minimum_is_met_by_either_device_default_and_not_by_less():
    assert missing(CPU_FULL) == []
    assert missing(CUDA_FULL) == []
    # Landlock alone lets a process holding capabilities read another's environ (seen on Linux 6.18): not enough
    assert missing([x for x in CUDA_FULL if x != "no-capabilities"]) == [
        "reference out of reach (no /proc read, ptrace or signal)"]
    assert missing([]) == list(MINIMUM)
    assert missing(["pidns", "netns", "subreaper", "reference-nondumpable"]) == [
        "writes only to its scratch folder", "reference out of reach (no /proc read, ptrace or signal)"]
    assert missing(["landlock-fs", "landlock-scope", "subreaper", "no-capabilities", "reference-nondumpable"]) == [
        "no network"]


def test_plan_override_narrows_and_rejects_unknown_names(monkeypatch):
    plan_for.cache_clear()
    try:
        monkeypatch.setenv("KERNELMOSAIC_ISOLATION_CPU", "none")
        off = plan_for("cpu")
        assert off.prefix == () and off.worker_args() == []
        plan_for.cache_clear()
        monkeypatch.setenv("KERNELMOSAIC_ISOLATION_CPU", "landlock-fs,subreaper")
        some = plan_for("cpu")
        assert some.prefix == () and not some.no_tcp and some.subreaper == True  # noqa: E712
        plan_for.cache_clear()
        monkeypatch.setenv("KERNELMOSAIC_ISOLATION_CPU", "seccomp")
        with pytest.raises(ValueError, match="unknown layer"):
            plan_for("cpu")
    finally:
        plan_for.cache_clear()


def test_cuda_plan_never_takes_user_or_pid_namespaces():
    plan = plan_for("cuda")
    assert "userns" not in plan.namespaces and "pidns" not in plan.namespaces and not plan.forks


ATTACK = textwrap.dedent('''
    import os, signal, socket, sys
    from kmworker.confine import confine
    scratch, outside, port, victim = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    tasks = sys.argv[5] == "cuda"
    print("layers", sorted(confine("worker", [scratch], True, True, True, True, drop_caps=True, tasks_writable=tasks)),
          flush=True)
    for path in (scratch + "/ok.txt", outside + "/escaped.txt"):
        try:
            open(path, "w").write("x"); print("wrote", path)
        except OSError as e:
            print("refused", path, e.errno)
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2); print("connected")
    except OSError as e:
        print("no connect", e.errno)
    for name in ("environ", "mem"):
        try:
            open(f"/proc/{victim}/{name}", "rb").read(16); print("read", name)
        except OSError as e:
            print("no read", name, e.errno)
    import threading, time
    t = threading.Thread(target=time.sleep, args=(2,)); t.start()  # CUDA names its threads like this (confine.OWN_TASKS)
    for what, path in (("own", f"/proc/self/task/{t.native_id}/comm"), ("victim", f"/proc/{victim}/comm"),
                       ("sysctl", "/proc/sys/kernel/core_pattern")):
        try:
            same = open(path).read()  # written back unchanged: harmless should the write get through
            with open(path, "w") as f:
                f.write(same)
            print("wrote proc", what)
        except OSError as e:
            print("no write proc", what, e.errno)
    t.join()
    try:
        os.kill(victim, signal.SIGTERM); print("signalled")
    except OSError as e:
        print("no signal", e.errno)
''')


@LANDLOCK
@pytest.mark.parametrize("device", ["cuda", "cpu"])
def test_confinement_stops_writes_tcp_proc_reads_and_signals(tmp_path, device):
    """What a CUDA worker has without namespaces: Landlock, no capabilities, a subreaper; a CPU worker's Landlock
    also keeps its own threads' /proc files read-only (CUDA's start writes them; `/proc/self/task/TID/mem` is one)."""
    scratch, outside = tmp_path / "scratch", tmp_path / "outside"
    scratch.mkdir()
    outside.mkdir()
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(2)
    listener.setblocking(False)
    victim = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                              env={**os.environ, "KM_ISOLATION_CANARY": "canary-7f3e"})
    try:
        out = subprocess.run([sys.executable, "-P", "-c", ATTACK, str(scratch), str(outside),
                              str(listener.getsockname()[1]), str(victim.pid), device],
                             env={**os.environ, "PYTHONPATH": str(WORKER_PACKAGE_DIR)}, capture_output=True, text=True,
                             timeout=60).stdout
        assert victim.poll() is None, "the confined process signalled a process outside its domain"
    finally:
        victim.kill()
        victim.wait()
    with pytest.raises(BlockingIOError):
        listener.accept()
    assert "layers ['landlock-fs', 'landlock-net', 'landlock-scope', 'no-capabilities', 'subreaper']" in out, out
    assert f"wrote {scratch}/ok.txt" in out and f"refused {outside}/escaped.txt" in out
    assert not (outside / "escaped.txt").exists()
    assert "no connect" in out and "connected\n" not in out
    assert "no read environ" in out and "no read mem" in out and "no signal" in out, out
    assert "canary-7f3e" not in out
    # its own threads' /proc files are writable on CUDA only (CUDA's initialisation needs that); another process's and
    # sysctls never
    assert ("wrote proc own" if device == "cuda" else "no write proc own") in out, out
    assert "no write proc victim" in out and "no write proc sysctl" in out, out


def test_kill_tree_takes_setsid_grandchildren_under_a_subreaper(tmp_path):
    pidfile = tmp_path / "grandchild"
    code = textwrap.dedent(f'''
        import ctypes, os, time
        ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # child subreaper, as a worker sets itself
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                open({str(pidfile)!r}, "w").write(str(os.getpid()))
                time.sleep(120)
            os._exit(0)
        time.sleep(120)
    ''')
    parent = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
    try:
        deadline = time.monotonic() + 20
        while not pidfile.exists() or not pidfile.read_text():
            assert time.monotonic() < deadline
            time.sleep(0.05)
        grandchild = int(pidfile.read_text())
        time.sleep(0.2)  # its own parent has exited: it is the subreaper's now, in another session
        assert grandchild in isolation.descendants(parent.pid)
        assert kill_tree(parent.pid) >= 1
        deadline = time.monotonic() + 5
        while Path(f"/proc/{grandchild}").exists() and _state(grandchild) != "Z" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not Path(f"/proc/{grandchild}").exists() or _state(grandchild) == "Z"
    finally:
        os.killpg(parent.pid, signal.SIGKILL)
        parent.wait()


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


@pytest.mark.slow
def test_worker_environment_block_names_no_scratch_and_reports_its_layers():
    worker = Worker("candidate", "cpu", WorkerLimits())
    try:
        worker.start(timeout=300)
        environ = Path(f"/proc/{worker.pid}/environ").read_bytes()
        assert str(worker.scratch).encode() not in environ.replace(str(worker.scratch / "tmp").encode(), b"")
        assert b"KM_WORKER_SCRATCH" not in environ
        assert str(worker.scratch).encode() not in Path(f"/proc/{worker.pid}/cmdline").read_bytes()
        plan = plan_for("cpu")
        assert set(plan.namespaces) <= set(worker.isolation)
        assert ("landlock-fs" in worker.isolation) == plan.landlock
    finally:
        worker.close()


def _accepted(isolated: list[str]) -> Verdict:
    stat = Stat(median_ms=1.0, q1_ms=1.0, q3_ms=1.0, samples=3)
    return Verdict(accepted=True, status=Status.accepted, message="ok", problem_sha256="p" * 8,
                   correctness=Correctness(trials=3, passed=3), env=Env(device="cpu", isolation=isolated),
                   timing=Timing(candidate=stat, eager=stat, speedup_vs_eager=1.0, timer="host"))


def test_verified_needs_the_minimum_isolation():
    good = _accepted(CPU_FULL)
    assert check_candidate([good]).verified, check_candidate([good]).reasons
    bare = check_candidate([_accepted(["pidns", "netns", "subreaper"])])
    assert not bare.verified
    assert any("minimum isolation" in r and "writes only" in r for r in bare.reasons), bare.reasons


def test_explain_shows_the_layers_and_what_is_missing():
    from rich.console import Console

    from kernelmosaic.verify.cli import _isolation

    full, bare = Console(record=True, width=200), Console(record=True, width=200)
    _isolation(_accepted(CPU_FULL), True, full)
    _isolation(_accepted(["netns"]), False, bare)
    shown = full.export_text()
    assert "(minimum met)" in shown and "landlock-fs: Landlock: writes only" in shown and "pidns: own PID" in shown
    short = bare.export_text()
    assert "below the minimum" in short and "every process ends with the judgement" in short
    assert "netns: own network" not in short  # the per-layer lines come with --explain only


SEAL = textwrap.dedent('''
    import os, sys, threading, time
    from kmworker.confine import confine, seal_tasks
    scratch = sys.argv[1]
    print("layers", sorted(confine("worker", [scratch], True, True, True, True, drop_caps=True, tasks_writable=True)))

    def attempt(stage):
        t = threading.Thread(target=time.sleep, args=(1,)); t.start()
        for what, path in (("comm", f"/proc/self/task/{t.native_id}/comm"),
                           ("mem", f"/proc/self/task/{threading.get_native_id()}/mem")):
            try:
                os.close(os.open(path, os.O_WRONLY)); print(stage, "opened", what)
            except OSError as e:
                print(stage, "refused", what, e.errno)
        t.join()

    attempt("before")
    print("sealed", seal_tasks([scratch], []))
    attempt("after")
    open(scratch + "/still.txt", "w").write("x"); print("wrote scratch")
''')


@LANDLOCK
def test_a_second_layer_takes_the_task_files_back_once_cuda_has_started(tmp_path, monkeypatch):
    """A CUDA worker keeps its own /proc/self/task writable for CUDA's start (and with it its memory file); the opt-in
    `landlock-tasks` layer takes them back afterwards, for the thread that runs candidate code and its new threads,
    and its scratch folder stays writable."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    out = subprocess.run([sys.executable, "-P", "-c", SEAL, str(scratch)],
                         env={**os.environ, "PYTHONPATH": str(WORKER_PACKAGE_DIR)}, capture_output=True, text=True,
                         timeout=60).stdout
    assert "before opened comm" in out and "before opened mem" in out, out
    assert "sealed ['landlock-tasks']" in out, out
    assert "after refused comm 13" in out and "after refused mem 13" in out and "wrote scratch" in out, out
    plan_for.cache_clear()
    try:
        monkeypatch.setenv("KERNELMOSAIC_ISOLATION_CUDA", ",".join([*CUDA_FULL, "landlock-tasks"]))
        assert "--seal-tasks" in plan_for("cuda").worker_args()
        monkeypatch.setenv("KERNELMOSAIC_ISOLATION_CUDA", ",".join(CUDA_FULL))
        plan_for.cache_clear()
        assert "--seal-tasks" not in plan_for("cuda").worker_args()  # opt-in until a GPU run shows CUDA keeps working
    finally:
        plan_for.cache_clear()
