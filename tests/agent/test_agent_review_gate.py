"""`generate` runs only the accepted tasks once a review exists, and says so."""

from __future__ import annotations

from resume_driver import FakeVerifierSet
from typer.testing import CliRunner

import kernelmosaic.verify.verifier_set as agent_verifiers
from kernelmosaic.cli import app
from kernelmosaic.store import open_store
from kernelmosaic.store.reviews import ReviewLog
from kernelmosaic.tasks import load_tasks


def test_generate_runs_only_accepted_tasks_once_reviewed(tmp_path, monkeypatch):
    monkeypatch.setattr(agent_verifiers, "VerifierSet", FakeVerifierSet)  # the local executor's
    monkeypatch.chdir(tmp_path)
    url = f"sqlite:///{tmp_path / 'km.db'}"
    relu = next(t for t in load_tasks("builtin") if t.id == "l1_relu")
    with open_store(url) as store:
        ReviewLog(store).record_decision("l1_relu", "accept", "alice", reference_sha256=relu.hashes.reference)
        ReviewLog(store).record_decision("l1_abs", "reject", "bob", "too easy")
    result = CliRunner().invoke(app, ["generate", "--device", "cpu", "--db", url, "--no-live"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "review gate: running the 1 accepted of 3 tasks" in result.output
    with open_store(url) as store:
        assert [e.task_id for e in store.list_episodes(store.latest_run().id)] == ["l1_relu"]
