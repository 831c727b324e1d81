"""Kill `kernelmosaic generate` with SIGKILL mid-run, resume it, and check that no step was lost or duplicated."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from resume_driver import PLAN

from kernelmosaic.contracts.trajectory import MessageEvent, ToolCallEvent, ToolResultEvent
from kernelmosaic.store import open_store

HERE = Path(__file__).resolve().parent
TASKS = ["l1_relu", "l1_abs", "l1_exp"]


def _generate(tmp_path: Path, *args: str) -> subprocess.Popen:
    src = HERE.parents[1] / "src"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), str(HERE)])}
    return subprocess.Popen([sys.executable, str(HERE / "resume_driver.py"), "generate", "--no-live", *args],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _events(store) -> int:
    run = store.latest_run()
    return 0 if run is None else sum(len(store.get_episode(e.id).events) for e in store.list_episodes(run.id))


def test_sigkill_then_resume_loses_and_duplicates_nothing(tmp_path):
    url = f"sqlite:///{tmp_path / 'km.db'}"
    task_args = [a for t in TASKS for a in ("--task", t)]
    proc = _generate(tmp_path, "--tasks", "builtin", "--model", "scripted:resume", "--device", "cpu", "--db", url,
                     "--concurrency", "2", *task_args)
    store = open_store(url)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None and _events(store) < 20:
        time.sleep(0.05)
    assert proc.poll() is None, f"generate ended before it could be killed:\n{proc.stdout.read()}"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    run = store.latest_run()
    before = {e.task_id: e.status for e in store.list_episodes(run.id)}
    assert "running" in before.values(), before  # really interrupted mid-way

    resumed = _generate(tmp_path, "--resume", "--db", url)
    output, _ = resumed.communicate(timeout=240)
    assert resumed.returncode == 0, output
    assert [r.id for r in store.list_runs()] == [run.id]  # continued the same run
    assert store.get_run(run.id).status == "done"
    episodes = store.list_episodes(run.id)
    assert sorted(e.task_id for e in episodes) == sorted(TASKS)
    for info in episodes:
        traj = store.load_trajectory(info.id)
        assert traj.exit_reason == "submitted", (info.task_id, traj.exit_reason)
        said = [e.message.content for e in traj.events if isinstance(e, MessageEvent) and e.message.role == "assistant"]
        assert said == [f"turn {i}: {name}" for i, (name, _) in enumerate(PLAN)]  # every step once, in order
        calls = [e.call.id for e in traj.events if isinstance(e, ToolCallEvent)]
        results = [e.call_id for e in traj.events if isinstance(e, ToolResultEvent)]
        assert calls == results == [f"call_{i}" for i in range(len(PLAN))]
        assert "ms=1" in traj.best.source and traj.totals.turns == len(PLAN)
    store.close()
