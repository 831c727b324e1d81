"""The README's main job, exactly as a new user runs it, through the real CPU verifier (no fake anywhere):
every bundled demonstration is replayed, its candidates compiled, checked and timed again, and solved."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from kernelmosaic.cli import app
from kernelmosaic.models.replay import bundled_path, load_trajectories
from kernelmosaic.store import open_store

pytestmark = pytest.mark.slow


def test_readme_main_job_solves_every_demonstration_with_the_real_verifier(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    url = f"sqlite:///{tmp_path / 'kernelmosaic.db'}"
    result = CliRunner().invoke(app, ["generate", "--tasks", "builtin", "--model", "replay:bundled", "--device", "cpu",
                                      "--db", url, "--no-live"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    recorded = {t.task_id for t in load_trajectories(bundled_path())}
    assert "replays recordings by" in result.output, "a replayed run says who wrote the recording"
    with open_store(url) as store:
        run = store.latest_run()
        summary = store.run_summary(run.id)
        assert run.status == "done" and run.config["origin_model"]
        assert summary.solved == len(recorded) and summary.failed == 0 and summary.flagged_tasks == {}
        for info in store.list_episodes(run.id):
            [solution] = [s for s in store.solutions(info.id) if s.candidate_sha256 == info.best_candidate_sha256]
            assert solution.verified and solution.verification.timed, info
            assert solution.verdict.env.device == "cpu" and solution.verdict.correctness.passed == solution.verdict.correctness.trials
            trajectory = store.load_trajectory(info.id)
            assert trajectory.tools and trajectory.origin_model
