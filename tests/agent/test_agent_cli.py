"""`kernelmosaic generate` in-process: the main job's replay of the bundled file (fake verifier), errors, resume by id."""

from __future__ import annotations

import json
import re

import pytest
from resume_driver import FakeVerifierSet
from typer.testing import CliRunner

import kernelmosaic.verify.verifier_set as agent_verifiers
from kernelmosaic.cli import app
from kernelmosaic.evaluate.records import task_meta_of
from kernelmosaic.models.replay import bundled_path, load_trajectories
from kernelmosaic.store import open_store
from kernelmosaic.tasks import load_tasks


@pytest.fixture
def fake_verifiers(monkeypatch):
    monkeypatch.setattr(agent_verifiers, "VerifierSet", FakeVerifierSet)  # the local executor's


def test_main_job_replays_every_bundled_trajectory(fake_verifiers, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    url = f"sqlite:///{tmp_path / 'km.db'}"
    result = CliRunner().invoke(app, ["generate", "--tasks", "builtin", "--model", "replay:bundled", "--device", "cpu",
                                      "--db", url, "--no-live"])
    assert result.exit_code == 0, result.output
    recorded = {t.task_id: t for t in load_trajectories(bundled_path())}
    assert 3 <= len(recorded) <= 5
    with open_store(url) as store:
        run = store.latest_run()
        assert run.status == "done" and run.config["agent"]["device"] == "cpu"
        tasks = {t.id: t for t in load_tasks("builtin")}
        meta = task_meta_of(run)  # what its report groups by, recorded as evaluate records it
        assert {i: (m.level, m.category) for i, m in meta.items()} == {
            i: (tasks[i].level, tasks[i].category) for i in recorded}
        episodes = store.list_episodes(run.id)
        assert sorted(e.task_id for e in episodes) == sorted(recorded)  # only the recorded tasks ran
        for info in episodes:
            assert info.exit_reason == "submitted" and info.best_candidate_sha256 and info.solved, info
            assert info.totals.turns == recorded[info.task_id].totals.turns
    files = sorted((tmp_path / "runs" / f"run-{run.id}" / "trajectories").glob("*.json"))
    assert [json.loads(f.read_text())["exit_reason"] for f in files] == ["submitted"] * len(recorded)
    assert f"run {run.id}: {len(recorded)} done" in result.output
    # captured output is not a terminal: one line per finished episode, before the summary
    lines = re.findall(r"^\[(\d+)/(\d+)\] (\S+)  solved  [\d.]+ s  \(submitted, .*turn\(s\)\)$", result.output, re.M)
    assert [(int(n), int(t)) for n, t, _ in lines] == [(k, len(recorded)) for k in range(1, len(recorded) + 1)]
    assert sorted(task for *_, task in lines) == sorted(recorded)
    assert result.output.index(f"[{len(recorded)}/") < result.output.index(f"run {run.id}: {len(recorded)} done")
    start = f"run {run.id}: {len(recorded)} episode(s) to run of {len(recorded)}"  # said before the first one ends
    assert start in result.output and result.output.index(start) < result.output.index("[1/"), result.output


def test_bundled_recordings_include_a_repair_after_a_compile_error():
    statuses = []
    for traj in load_trajectories(bundled_path()):
        assert traj.exit_reason == "submitted" and traj.best is not None and traj.best.verdict.accepted
        assert "load_inline" in traj.best.source and "cuda_sources" not in traj.best.source
        statuses += [e.verdict.status.value if e.verdict else e.content.split(" (")[0]
                     for e in traj.events if e.type == "tool_result"]
    assert "Compile failed" in statuses and "accepted" in statuses


def test_bad_invocations_exit_2_with_a_message(fake_verifiers, tmp_path):
    url = f"sqlite:///{tmp_path / 'km.db'}"
    runner = CliRunner()
    result = runner.invoke(app, ["generate", "--db", url, "--task", "no_such_task", "--device", "cpu", "--no-live"])
    assert result.exit_code == 2 and "unknown task id(s): no_such_task" in result.output
    result = runner.invoke(app, ["generate", "7", "--db", url])
    assert result.exit_code == 2 and "only accepted with --resume" in result.output
    result = runner.invoke(app, ["generate", "--db", url, "--model", "nope:x", "--device", "cpu"])
    assert result.exit_code == 2 and "unknown model scheme" in result.output
    result = runner.invoke(app, ["generate", "--resume", "--db", url])
    assert result.exit_code == 2 and "no run to resume" in result.output
    with open_store(url) as store:
        assert store.list_runs() == []  # nothing half-created


def test_resume_by_run_id_skips_done_tasks(fake_verifiers, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    url = f"sqlite:///{tmp_path / 'km.db'}"
    args = ["--db", url, "--no-live"]
    first = CliRunner().invoke(app, ["generate", "--model", "replay:bundled", "--device", "cpu", "--limit", "1", *args])
    assert first.exit_code == 0, first.output
    with open_store(url) as store:
        run = store.latest_run()
        events = len(store.get_episode(store.list_episodes(run.id)[0].id).events)
    again = CliRunner().invoke(app, ["generate", "--resume", str(run.id), *args])
    assert again.exit_code == 0, again.output
    with open_store(url) as store:
        [episode] = store.list_episodes(run.id)
        assert len(store.get_episode(episode.id).events) == events  # done: not run again
