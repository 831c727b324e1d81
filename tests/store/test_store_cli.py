"""`kernelmosaic runs list | show | export` through typer's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from store_helpers import CANDIDATE, accepted_verdict, every_event_type
from typer.testing import CliRunner

from kernelmosaic.contracts.trajectory import Solution, Totals, Trajectory
from kernelmosaic.store import StoreError, open_store
from kernelmosaic.store.cli import app
from kernelmosaic.store.export import read_jsonl

runner = CliRunner()


@pytest.fixture
def recorded(db_url: str) -> int:
    """A run with one solved episode, one that ran out of budget and one still running."""
    with open_store(db_url) as store:
        run_id = store.create_run("cli-run", "fake:scripted", "seed", {"turns": 4})
        for task_id in ("solved-task", "budget-task", "live-task"):
            episode = store.start_episode(run_id, task_id)
            for seq, event in enumerate(every_event_type()):
                store.append_event(episode.id, seq, event)
            if task_id == "solved-task":
                sha = store.record_candidate(episode.id, CANDIDATE)
                best = Solution(source=CANDIDATE, candidate_sha256=sha, verdict=accepted_verdict(3.0), step=1)
                store.finish_episode(episode.id, "submitted", Totals(prompt_tokens=120, turns=1), best=best)
            elif task_id == "budget-task":
                store.finish_episode(episode.id, "budget_exhausted", Totals(prompt_tokens=500, turns=4))
    return run_id


def test_list_shows_runs(db_url: str, recorded: int) -> None:
    result = runner.invoke(app, ["list", "--db", db_url], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "cli-run" in result.output and "fake:scripted" in result.output and "50%" in result.output
    as_json = runner.invoke(app, ["list", "--db", db_url, "--json"])
    [summary] = json.loads(as_json.stdout)
    assert (summary["run"]["id"], summary["episodes"], summary["solved"], summary["running"]) == (recorded, 3, 1, 1)


def test_show_uses_env_db_and_lists_episodes(db_url: str, recorded: int) -> None:
    result = runner.invoke(app, ["show", str(recorded)], env={"KERNELMOSAIC_DB": db_url, "COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    for text in ("solved-task", "budget-task", "live-task", "3.00x", "budget_exhausted", "pass rate 50.0%"):
        assert text in result.output
    data = json.loads(runner.invoke(app, ["show", str(recorded), "--db", db_url, "--json"]).stdout)
    assert [e["task_id"] for e in data["episodes"]] == ["solved-task", "budget-task", "live-task"]
    assert data["summary"]["best_speedups"] == {"solved-task": 3.0}


def test_export_writes_trajectory_jsonl(db_url: str, recorded: int, tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    result = runner.invoke(app, ["export", str(recorded), "--out", str(out), "--db", db_url])
    assert result.exit_code == 0, result.output
    lines = out.read_text().splitlines()
    assert len(lines) == 3 and all(json.loads(line)["schema"] == "kernelmosaic.trajectory/2" for line in lines)
    trajectories = read_jsonl(out)
    with open_store(db_url) as store:
        expected = list(store.iter_trajectories(recorded))
    assert trajectories == expected
    assert [Trajectory.model_validate_json(line) for line in lines] == expected
    assert trajectories[0].best.verdict.timing.speedup_vs_eager == 3.0 and trajectories[0].best.verified
    assert trajectories[2].exit_reason == "" and len(trajectories[2].events) == len(every_event_type())

    done_only = tmp_path / "done.jsonl"
    runner.invoke(app, ["export", str(recorded), "-o", str(done_only), "--db", db_url, "--done-only"])
    assert [t.task_id for t in read_jsonl(done_only)] == ["solved-task", "budget-task"]


def test_cli_errors_are_clear(db_url: str, recorded: int, tmp_path: Path) -> None:
    missing = runner.invoke(app, ["show", "77", "--db", db_url])
    assert missing.exit_code == 2 and "no run with id 77" in missing.output  # unusable input, docs/cli.md
    bad_url = runner.invoke(app, ["list", "--db", "mysql://nowhere/x"])
    assert bad_url.exit_code == 2 and "no backend for scheme 'mysql'" in bad_url.output
    no_dir = runner.invoke(app, ["export", str(recorded), "--out", str(tmp_path / "nope" / "x.jsonl"), "--db", db_url])
    assert no_dir.exit_code == 2 and "does not exist" in no_dir.output
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"schema": "kernelmosaic.trajectory/1", "task_id": "t", "model": "m"}\n{"task_id": 3}\n')
    with pytest.raises(StoreError, match=r"broken.jsonl:2: not a kernelmosaic.trajectory/2"):
        read_jsonl(broken)


def test_read_only_commands_create_nothing(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KERNELMOSAIC_DB", raising=False)
    result = runner.invoke(app, ["list"])
    assert result.exit_code == 2 and "no store at" in result.output
    assert list(tmp_path.iterdir()) == [], "runs list created a database"


def test_show_reports_run_wall_time_not_the_sum_of_episodes(db_url: str, recorded: int) -> None:
    result = runner.invoke(app, ["show", str(recorded), "--db", db_url], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "so far" in result.output and "summed" in result.output


def test_an_unreliable_speedup_is_marked_and_left_out_of_the_mean(db_url: str) -> None:
    """A best solution whose timings' quartile range is wider than `contracts.speedup.MAX_SPREAD` shows its speedup
    with a mark and the caveat, and the run's geometric mean leaves it out; unmeasured tokens and cost are not 0."""
    with open_store(db_url) as store:
        run_id = store.create_run("shaky", "replay:bundled", "seed", {})
        for task_id, spread in (("steady", 0.1), ("shaky", 0.6)):
            episode = store.start_episode(run_id, task_id)
            sha = store.record_candidate(episode.id, CANDIDATE)
            best = Solution(source=CANDIDATE, candidate_sha256=sha, verdict=accepted_verdict(4.0, spread=spread), step=1)
            store.finish_episode(episode.id, "submitted", Totals(turns=1), best=best)
        summary = store.run_summary(run_id)
        infos = {e.task_id: e for e in store.list_episodes(run_id)}
    assert summary.best_speedups == {"steady": 4.0}
    assert summary.unreliable_speedups == {"shaky": "unreliable: 2.50x-10.00x between quartiles"}
    assert infos["shaky"].best_speedup_caveat and not infos["steady"].best_speedup_caveat
    out = runner.invoke(app, ["show", str(run_id), "--db", db_url], env={"COLUMNS": "200"}).output
    assert "geomean best speedup 4.00x (1 task(s) with only unreliable speedups left out)" in out
    assert "4.00x*" in out and "* shaky: best speedup unreliable: 2.50x-10.00x between quartiles" in out
    assert "tokens not measured, cost not measured" in out and "0.0000" not in out
