"""`evaluate --generations` through the Ray executor and through the local one, on the CPU device: the same status
for every candidate and the same gate values in the report's summary.json."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kernelmosaic.cli import app
from kernelmosaic.contracts.trajectory import ToolResultEvent
from kernelmosaic.store import open_store
from tests.agent import e2e_kit as kit

pytestmark = pytest.mark.slow

GATES = ("episodes", "tasks", "gate1_compile", "first_compile", "correct", "seeds")
"""The summary's counts that follow from the verdicts' statuses (speedups are host timings: they differ run to run)."""


@pytest.fixture(scope="module")
def kernelbench(tmp_path_factory):
    """A one-problem KernelBench checkout and generations in its runs layout: a correct, a wrong and a broken
    candidate (the e2e kit's extension, which test_ray_verify has built already)."""
    root = tmp_path_factory.mktemp("kb")
    (root / "KernelBench" / "level1").mkdir(parents=True)
    (root / "KernelBench" / "level1" / "1_Tiny_ReLU.py").write_text(kit.PROBLEM)
    broken = kit.GOOD.replace("return ext.relu_basic(x)", "return ext.relu_basic(x")
    for k, source in enumerate((kit.GOOD, kit.WRONG, broken)):
        (root / "gens" / "level_1" / "problem_1" / f"sample_{k}").mkdir(parents=True)
        (root / "gens" / "level_1" / "problem_1" / f"sample_{k}" / "kernel.py").write_text(source)
    return root


def _evaluate(root, name: str, *executor: str) -> tuple[dict[str, str], dict]:
    """Candidate -> status, and summary.json's overall section, of one evaluation into its own store."""
    db, out = f"sqlite:///{root / f'{name}.db'}", root / f"report-{name}"
    res = CliRunner().invoke(app, ["evaluate", "--generations", str(root / "gens"), "--tasks",
                                   f"kernelbench:{root}", "--device", "cpu", "--db", db, "--out",
                                   str(root / f"runs-{name}"), "--concurrency", "2", "--no-alternatives", *executor])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(app, ["report", "1", "--db", db, "--out", str(out)])
    assert res.exit_code == 0, res.output
    with open_store(db) as store:
        statuses, served = {}, set()
        for info in store.list_episodes(1):
            [verdict] = [e.verdict for e in store.load_trajectory(info.id).events
                         if isinstance(e, ToolResultEvent) and e.verdict is not None]
            statuses[info.task_id] = verdict.status.value
            served |= {verdict.workers.served_by} if verdict.workers else set()
    assert served and all(("ray judge" in s) == bool(executor) for s in served), served  # judged where asked
    return statuses, json.loads((out / "summary.json").read_text())["runs"][0]["overall"]


def test_evaluate_generations_on_ray_gives_the_local_report(ray_cluster, kernelbench):
    local, local_summary = _evaluate(kernelbench, "local")
    remote, remote_summary = _evaluate(kernelbench, "ray", "--executor", "ray", "--set", "scale.judges=1")
    assert len(local) == 3 and set(local.values()) >= {"output_mismatch", "compile_error"}, local
    assert remote == local
    assert {g: remote_summary[g] for g in GATES} == {g: local_summary[g] for g in GATES}
