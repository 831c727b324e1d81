"""A worker's scratch directory is removed when the worker ends, unless `keep_scratch` asks to keep it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kernelmosaic.verify.pool import Worker, WorkerLimits


def test_scratch_removed_on_close_and_output_tail_survives(tmp_path):
    worker = Worker("candidate", "cpu", WorkerLimits(), scratch_root=tmp_path)
    worker.start()
    worker.log_path.write_text("last words of the worker\n")  # the worker's own log, as a crash would leave it
    worker.close()
    assert not worker.scratch.exists() and list(tmp_path.iterdir()) == []
    assert "last words of the worker" in worker.output_tail()


def test_scratch_kept_when_asked(tmp_path):
    worker = Worker("candidate", "cpu", WorkerLimits(), scratch_root=tmp_path, keep_scratch=True)
    worker.start()
    worker.kill()
    assert worker.scratch.is_dir() and worker.scratch.parent == tmp_path


def test_a_worker_that_never_started_leaves_nothing(tmp_path):
    Worker("compile", "cpu", WorkerLimits(), scratch_root=tmp_path).kill()
    assert list(tmp_path.iterdir()) == []


ORPHAN = """
import sys
from pathlib import Path
from kernelmosaic.verify.pool import Worker, WorkerLimits
worker = Worker("candidate", "cpu", WorkerLimits(), scratch_root=Path(sys.argv[1]), keep_scratch=sys.argv[2] == "keep")
if sys.argv[3] == "spare":
    worker.spawn(defer_device=True)
elif sys.argv[3] == "starting":  # gone before the worker greets: its greeting finds no one
    worker.spawn()
else:
    worker.start()
print(worker.proc.pid, worker.scratch, flush=True)
import json
import os
os._exit(0)  # the parent ends without closing its worker, as a killed verifier does
"""


def _orphan(tmp_path, keep: bool, state: str):
    """A parent process that starts a worker and ends without closing it, the worker `state` (a waiting spare, a
    worker still starting, a ready one); returns the worker's scratch once the worker has exited."""
    done = subprocess.run([sys.executable, "-c", ORPHAN, str(tmp_path), "keep" if keep else "drop", state],
                          capture_output=True, text=True, timeout=120, check=True)
    pid, scratch = done.stdout.split()
    deadline = time.monotonic() + 60
    while _alive(int(pid)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(int(pid)), "the orphaned worker should exit once its parent is gone"
    return Path(scratch)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "zombie" not in Path(f"/proc/{pid}/status").read_text().lower()


@pytest.mark.parametrize("state", ["ready", "spare", "starting"])
def test_a_worker_whose_parent_died_removes_its_scratch(tmp_path, state):
    scratch = _orphan(tmp_path, keep=False, state=state)
    assert scratch.parent == tmp_path and not scratch.exists()
    assert list(tmp_path.iterdir()) == []


def test_an_orphaned_worker_keeps_its_scratch_when_asked(tmp_path):
    scratch = _orphan(tmp_path, keep=True, state="spare")
    assert scratch.is_dir() and (scratch / "output.log").exists()


KILLED = """
import sys, time
from pathlib import Path
from kernelmosaic.verify.pool import Worker, WorkerLimits
worker = Worker("candidate", "cpu", WorkerLimits(), scratch_root=Path(sys.argv[1]), keep_scratch=sys.argv[2] == "keep")
if sys.argv[3] == "spawned":
    worker.spawn(defer_device=True)
print(worker.proc.pid if worker.proc else 0, worker.scratch, flush=True)
time.sleep(600)
"""


def _killed_with_its_worker(tmp_path, keep: bool = False, spawned: bool = True) -> Path:
    """A verifier process and its worker SIGKILLed together (as Ray ends an actor with its descendants): neither can
    remove the worker's scratch. Returns the scratch folder left behind."""
    parent = subprocess.Popen([sys.executable, "-c", KILLED, str(tmp_path), "keep" if keep else "drop",
                               "spawned" if spawned else "made"], stdout=subprocess.PIPE, text=True)
    pid, scratch = parent.stdout.readline().split()
    if int(pid):
        os.kill(int(pid), 9)
    parent.kill()
    parent.wait(30)
    deadline = time.monotonic() + 30
    while int(pid) and _alive(int(pid)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert Path(scratch).is_dir(), "killed together, nobody removed it"
    return Path(scratch)


@pytest.mark.parametrize("spawned", [True, False])
def test_the_scratch_of_a_verifier_killed_with_its_worker_is_swept_by_the_next(tmp_path, spawned):
    from kernelmosaic.verify.scratch import sweep_stale_scratch

    left = _killed_with_its_worker(tmp_path, spawned=spawned)
    live = Worker("candidate", "cpu", WorkerLimits(), scratch_root=tmp_path)  # this process's own: it stays
    other = tmp_path / "km-candidate-notours"
    other.mkdir()  # no owner record (older code, or being made): not judged
    assert sweep_stale_scratch(tmp_path) == 1
    assert not left.exists() and live.scratch.is_dir() and other.is_dir()
    live.kill()


def test_a_kept_scratch_is_never_swept(tmp_path):
    from kernelmosaic.verify.scratch import sweep_stale_scratch

    kept = _killed_with_its_worker(tmp_path, keep=True)
    assert sweep_stale_scratch(tmp_path) == 0 and kept.is_dir()


def test_a_folder_is_stale_only_when_every_owner_is_gone_and_a_reused_pid_is_not_its_owner(tmp_path):
    from kernelmosaic.verify.scratch import OWNER_FILE, _started, sweep_stale_scratch

    me = {"pid": os.getpid(), "started": _started(os.getpid())}
    dead = {"pid": _dead_pid(), "started": 1}
    reused = {"pid": os.getpid(), "started": me["started"] - 1}  # this pid, but another process's start time
    cases = {"orphan-running": [dead, me], "reused": [reused], "dead": [dead]}
    for name, owners in cases.items():
        (tmp_path / f"km-compile-{name}").mkdir()
        (tmp_path / f"km-compile-{name}" / OWNER_FILE).write_text(json.dumps({"owners": owners}))
    (tmp_path / "km-elsewhere-dead").mkdir()  # not a worker folder's name
    (tmp_path / "km-elsewhere-dead" / OWNER_FILE).write_text(json.dumps({"owners": [dead]}))
    assert sweep_stale_scratch(tmp_path) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["km-compile-orphan-running", "km-elsewhere-dead"]


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _sent_ops(worker: Worker) -> list:
    """Record the ops the parent sends the worker from now on (the real channel still sends them)."""
    sent, send = [], worker.channel.send
    worker.channel.send = lambda msg: (sent.append(msg.get("op")), send(msg))[1]
    return sent


def test_closing_a_worker_that_is_still_loading_kills_it_without_waiting_on_an_exit_request(tmp_path):
    worker = Worker("candidate", "cpu", WorkerLimits(), scratch_root=tmp_path)
    worker.spawn(defer_device=True)  # importing torch: it would read an `exit` request only after that
    sent = _sent_ops(worker)
    worker.close()  # before: `exit` sent, and the parent waited for the imports (about 4 s here, at most 5 s)
    # killed, never asked: the process group's SIGKILL, or (in a PID namespace) `unshare` exiting with status 1
    # once kill_tree had killed the worker beneath it (a race CI lost once); an exit on request would be 0
    assert sent == [] and worker.proc.returncode in (-signal.SIGKILL, 1) and not worker.scratch.exists()


def test_closing_a_ready_worker_asks_it_to_exit(tmp_path):
    worker = Worker("candidate", "cpu", WorkerLimits(), scratch_root=tmp_path)
    worker.start()
    sent = _sent_ops(worker)
    worker.close()
    assert sent == ["exit"] and worker.proc.poll() is not None and not worker.scratch.exists()


STOP_SCRIPT = r"""
import json, sys
from pathlib import Path
from kernelmosaic.verify.pool import Worker, WorkerDied, WorkerLimits
from kernelmosaic.verify.stopping import request_stop
root = Path(sys.argv[1])
made = Worker("compile", "cpu", WorkerLimits(), scratch_root=root)  # made, never spawned (a judgement cut here)
kept = Worker("candidate", "cpu", WorkerLimits(), scratch_root=root, keep_scratch=True)
request_stop()  # what SIGINT/SIGTERM do
after = Worker("candidate", "cpu", WorkerLimits(), scratch_root=root)  # made once the stop's sweep has run
try:
    after.spawn()
    refused = False
except WorkerDied:
    refused = True
print(json.dumps({"made": made.scratch.exists(), "kept": kept.scratch.exists(), "after": after.scratch.exists(),
                  "refused": refused}))
"""


def test_a_stop_removes_the_scratch_of_workers_made_but_never_spawned(tmp_path):
    """A full-suite run left a `km-compile-*` folder behind a stopped `verify-batch`: a worker made, then dropped
    when the stop cut its judgement before it spawned, was in no list the stop went through."""
    res = subprocess.run([sys.executable, "-c", STOP_SCRIPT, str(tmp_path)], capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert json.loads(res.stdout.strip().splitlines()[-1]) == {"made": False, "kept": True, "after": False,
                                                              "refused": True}
    assert [p.name.split("-")[1] for p in tmp_path.iterdir()] == ["candidate"]  # only the one kept on purpose
