"""A real episode on CPU: scripted model, the real Verifier, real C++ builds, recorded in the store.

The model breaks the build, repairs it, gets a wrong answer, repairs it, is accepted, then optimizes.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from agent_kit import call, make_task
from e2e_kit import BROKEN, FAST, GOOD, PROBLEM, WRONG

from kernelmosaic.agent import AgentConfig, GenerateConfig, run_tasks
from kernelmosaic.contracts.trajectory import MessageEvent, ToolCallEvent, ToolResultEvent, Trajectory
from kernelmosaic.models.scripted import ScriptedModel
from kernelmosaic.verify import Verifier, VerifyConfig

pytestmark = pytest.mark.slow


def test_compile_error_wrong_answer_repairs_acceptance_and_optimization(store, tmp_path):
    script = [
        call("write_candidate", source=BROKEN), call("compile"),
        call("write_candidate", source=WRONG), call("test"),
        call("write_candidate", source=GOOD), call("test"),
        call("write_candidate", source=FAST), call("benchmark"),
        call("submit"),
    ]
    config = GenerateConfig(tasks="inline", model="scripted:e2e", out_dir=tmp_path / "runs", agent=AgentConfig(device="cpu"))
    run_id = store.create_run("e2e", config.model, config.tasks, config)
    task = make_task("e2e_relu", reference=PROBLEM, small={"n": 1000})
    # Default build cache: content-keyed, so repeated CI runs on one machine reuse the one good build.
    verify_config = VerifyConfig(device="cpu", trials=3, timing_budget_ms=20, timing_rounds=2, compile_baseline=False)
    with Verifier(verify_config) as verifier:
        [info] = asyncio.run(run_tasks([task], store=store, verifier_for=lambda _: verifier, backend=ScriptedModel(script),
                                       run_id=run_id, config=config))
    assert info.exit_reason == "submitted", info
    traj = store.load_trajectory(info.id)
    results = {}
    for e in traj.events:
        if isinstance(e, ToolResultEvent):
            results.setdefault(e.name, []).append(e)
    compile_out = results["compile"][0].content
    assert compile_out.startswith("Compile failed (compile_error)")
    assert "main.cpp:" in compile_out and "error:" in compile_out and "src" in compile_out
    assert "[1/" not in compile_out and len(compile_out.splitlines()) <= 40
    wrong, good = results["test"]
    assert wrong.verdict.status == "output_mismatch" and not wrong.verdict.accepted
    assert "FAILED (output_mismatch)" in wrong.content and "max abs error" in wrong.content
    assert good.verdict.accepted and "PASSED" in good.content and "Phase 2" in good.content
    bench = results["benchmark"][0]
    assert bench.verdict.accepted and bench.verdict.timing.candidate.median_ms > 0
    assert "speedup vs eager" in bench.content
    # The answer is the benchmarked (optimized) candidate; the problem ran at the small shape.
    assert traj.best is not None and "relu_unrolled(x)" in traj.best.source
    assert traj.best.verdict.candidate_sha256 == traj.best.candidate_sha256
    assert [e.message.role for e in traj.events if isinstance(e, MessageEvent)][:2] == ["system", "user"]
    assert "n = 1000" in traj.events[1].message.content
    assert sum(isinstance(e, ToolCallEvent) for e in traj.events) == len(script)
    assert traj.totals.turns == len(script) and traj.exit_reason == "submitted"
    # Exported form: the trajectory file round-trips through the schema.
    path = tmp_path / "runs" / f"run-{run_id}" / "trajectories" / "e2e_relu.json"
    exported = Trajectory.model_validate(json.loads(path.read_text()))
    assert len(exported.events) == len(traj.events) and exported.best.candidate_sha256 == traj.best.candidate_sha256
