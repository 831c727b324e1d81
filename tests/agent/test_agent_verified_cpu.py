"""The seam that curation, SFT and evaluation trust, with the real CPU verifier: a candidate accepted by test() and
rejected while being timed is no solution and not solved; a flagged task's solution is kept but never counted."""

from __future__ import annotations

import asyncio

import pytest
from agent_kit import call, make_task
from e2e_kit import PROBLEM, STALE

from kernelmosaic.agent import AgentConfig, GenerateConfig, run_tasks
from kernelmosaic.contracts.trajectory import ToolResultEvent
from kernelmosaic.models.scripted import ScriptedModel
from kernelmosaic.verify import Verifier, VerifyConfig

pytestmark = pytest.mark.slow


def test_accepted_then_rejected_at_benchmark_is_not_a_solution(store, tmp_path):
    script = [call("write_candidate", source=STALE), call("test"), call("benchmark"), call("submit")]
    config = GenerateConfig(tasks="inline", model="scripted:stale", out_dir=tmp_path / "runs", agent=AgentConfig(device="cpu"))
    run_id = store.create_run("stale", config.model, config.tasks, config)
    task = make_task("stale_relu", reference=PROBLEM, small={"n": 1000})
    verify_config = VerifyConfig(device="cpu", trials=3, timing_budget_ms=20, timing_rounds=2, compile_baseline=False)
    with Verifier(verify_config) as verifier:
        [info] = asyncio.run(run_tasks([task], store=store, verifier_for=lambda _: verifier,
                                       backend=ScriptedModel(script), run_id=run_id, config=config))
    traj = store.load_trajectory(info.id)
    results = {e.name: e for e in traj.events if isinstance(e, ToolResultEvent)}
    assert results["test"].verdict.accepted, results["test"].content
    bench = results["benchmark"].verdict
    assert not bench.accepted and bench.status == "output_mismatch", results["benchmark"].content
    assert "No candidate passes any more" in results["benchmark"].content
    assert "Nothing to submit yet" in results["submit"].content
    assert traj.best is None and not info.solved and info.best_candidate_sha256 == ""
    assert store.solutions(info.id) == [] and store.run_summary(run_id).solved == 0
