"""`verify-batch` through the Ray executor on the CPU device: the same verdicts as the local pool, judges pinned one
per logical GPU, and a judge killed with a job in flight: the job is judged again, and the output holds exactly one
verdict per pair."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kernelmosaic.cli import app
from kernelmosaic.runs.ray_executor import RayExecutor
from kernelmosaic.verify import Status, VerifyConfig
from kernelmosaic.verify.batch import discover_pairs, run_batch
from kernelmosaic.verify.executor import LocalVerifyExecutor
from kernelmosaic.verify.ray.config import ScaleConfig
from kernelmosaic.verify.ray.dispatch import Dispatcher
from tests.agent import e2e_kit as kit

pytestmark = pytest.mark.slow

# The agent's end-to-end candidates: one extension source, built once in the default (content-keyed) build cache,
# which tests/agent/test_agent_e2e_cpu.py has usually filled already.
CASES = {
    "correct": (kit.GOOD, Status.accepted),
    "wrong": (kit.WRONG, Status.output_mismatch),
    "syntax": (kit.GOOD.replace("return ext.relu_basic(x)", "return ext.relu_basic(x"), Status.compile_error),
    "raises": (kit.GOOD.replace("return ext.relu_basic(x)", "raise RuntimeError('exploded'); return ext.relu_basic(x)"), Status.runtime_error),
}


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    root = tmp_path_factory.mktemp("pairs")
    for name, (source, _) in CASES.items():
        (root / name).mkdir()
        (root / name / "problem.py").write_text(kit.PROBLEM)
        (root / name / "candidate.py").write_text(source)
    return discover_pairs(root)


def _config() -> VerifyConfig:
    return VerifyConfig(device="cpu", trials=2, timing=False, compile_baseline=False, seed=7,
                        run_timeout_s=30, memory_limit_gb=8, use_service=False)


def _statuses(path) -> dict[str, tuple[bool, str]]:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(rows) == len({r["id"] for r in rows}), "a pair was judged twice"
    return {r["id"].split("/")[0]: (r["verdict"]["accepted"], r["verdict"]["status"]) for r in rows}


def test_verify_batch_on_ray_gives_the_local_pools_verdicts(ray_cluster, batch, tmp_path):
    list(run_batch(batch, _config(), tmp_path / "local.jsonl", executor=LocalVerifyExecutor()))
    root = batch[0].problem.parent.parent  # the same settings, from the command line, on two judges (logical GPUs)
    res = CliRunner().invoke(app, ["verify-batch", str(root), "--out", str(tmp_path / "ray.jsonl"), "--device", "cpu",
                                   "--trials", "2", "--no-timing", "--executor", "ray", "--set", "verify.seed=7",
                                   "--set", "verify.compile_baseline=false", "--set", "verify.use_service=false"])
    assert res.exit_code == 1, res.output  # judged, and CASES has rejected candidates
    rows = [json.loads(line) for line in (tmp_path / "ray.jsonl").read_text().splitlines()]
    local, remote = _statuses(tmp_path / "local.jsonl"), _statuses(tmp_path / "ray.jsonl")
    assert remote == local == {name: (status == Status.accepted, status.value) for name, (_, status) in CASES.items()}
    judged_by = {r["verdict"]["workers"]["served_by"] for r in rows if r["verdict"]["workers"]}
    assert judged_by and all(s.startswith("ray judge ") and "(GPU " in s for s in judged_by), judged_by


def test_a_judge_killed_mid_job_has_the_job_judged_again(ray_cluster, batch, tmp_path, monkeypatch):
    killed: list[int] = []
    take = Dispatcher._take_judge

    def take_then_kill(self, node):
        index, generation, handle = take(self, node)
        if killed:
            return index, generation, handle

        class Killer:  # submits the judgement, then kills the judge with it in flight
            class judge:  # noqa: N801 - mirrors the actor method's name
                @staticmethod
                def remote(*args):
                    ref = handle.judge.remote(*args)
                    ray_cluster.kill(handle, no_restart=True)
                    killed.append(index)
                    return ref

        return index, generation, Killer

    monkeypatch.setattr(Dispatcher, "_take_judge", take_then_kill)
    two = [p for p in batch if p.id.split("/")[0] in ("correct", "wrong")]
    with RayExecutor(ScaleConfig(executor="ray"), device="cpu") as executor:
        assert executor.placement.judges == 2 and executor.placement.judge_gpus == 1
        list(run_batch(two, _config(), tmp_path / "ray.jsonl", executor=executor))
        assert killed and executor.replacements() == 1
    assert _statuses(tmp_path / "ray.jsonl") == {"correct": (True, "accepted"), "wrong": (False, "output_mismatch")}
