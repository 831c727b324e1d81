"""Placement, limits and refusals on the local Ray instance's logical resources: judges and in-process models on
different GPUs, one model endpoint's calls capped across actors, and a SQLite store refused on a multi-node cluster."""

from __future__ import annotations

import asyncio
import time

import pytest
from typer.testing import CliRunner

import kernelmosaic.verify.ray.executor as ray_executor
from kernelmosaic.cli import app
from kernelmosaic.contracts.messages import Message, ModelReply
from kernelmosaic.runs.limits import LimitedBackend, limiter_for
from kernelmosaic.verify.ray.cluster import StoreNotShared, check_store_for_nodes
from kernelmosaic.verify.ray.config import ScaleConfig
from kernelmosaic.verify.ray.judges import JudgeRegistry
from kernelmosaic.verify.ray.placement import plan_placement


def test_an_in_process_model_and_the_judges_get_different_gpus(ray_cluster):
    placement = plan_placement(ScaleConfig(executor="ray"), 2, "hf:tiny", concurrency=1, device="cpu")
    assert (placement.judges, placement.judge_gpus, placement.episode_actors, placement.episode_gpus) == (1, 1.0, 1, 1.0)
    registry = ray_cluster.remote(JudgeRegistry).options(num_cpus=0).remote(placement.judges, placement.judge_gpus, 1)
    [(_, judge)] = ray_cluster.get(registry.judges.remote())
    judge_gpus = ray_cluster.get(judge.info.remote())["gpu_ids"]

    @ray_cluster.remote(num_gpus=placement.episode_gpus, num_cpus=0)
    def model_gpus() -> list[str]:
        return [str(g) for g in ray_cluster.get_gpu_ids()]

    assert len(judge_gpus) == 1 and ray_cluster.get(model_gpus.remote()) != judge_gpus
    ray_cluster.kill(registry)
    with pytest.raises(ValueError, match="do not fit"):
        plan_placement(ScaleConfig(executor="ray", judges=2), 2, "hf:tiny", concurrency=1, device="cpu")
    with pytest.raises(ValueError, match="without GPU resources"):
        plan_placement(ScaleConfig(executor="ray"), 0, "openai:m", concurrency=1, device="cuda")


class _Slow:
    name = "openai:slow"

    def for_task(self, task_id: str) -> _Slow:
        return self

    async def complete(self, messages, tools) -> ModelReply:
        await asyncio.sleep(0.2)
        return ModelReply(message=Message(role="assistant", content="ok"), raw="ok", finish_reason="stop")


def test_model_calls_per_endpoint_are_capped(ray_cluster):
    limiter = limiter_for("openai:slow|http://endpoint", 1)
    backends = [LimitedBackend(_Slow(), limiter) for _ in range(3)]  # as three episode actors would hold them

    async def all_at_once() -> None:
        await asyncio.gather(*(b.complete([], []) for b in backends))

    started = time.perf_counter()
    asyncio.run(all_at_once())
    assert time.perf_counter() - started >= 0.55  # one at a time
    assert ray_cluster.get(limiter.stats.remote()) == {"calls": 3, "peak": 1, "in_flight": 0}


def test_a_sqlite_store_is_refused_on_a_multi_node_cluster(ray_cluster, tmp_path, monkeypatch):
    check_store_for_nodes(f"sqlite:///{tmp_path / 'km.db'}", 1)
    check_store_for_nodes("postgresql://km@db/km", 3)
    with pytest.raises(StoreNotShared, match="2 live nodes"):
        check_store_for_nodes(f"sqlite:///{tmp_path / 'km.db'}", 2)
    alive = ray_executor.alive_nodes()
    monkeypatch.setattr(ray_executor, "alive_nodes", lambda: alive * 2)  # the node count as a second machine reports it
    res = CliRunner().invoke(app, ["generate", "--executor", "ray", "--db", str(tmp_path / "km.db"), "--no-live",
                                   "--device", "cpu", "--limit", "1", "--out", str(tmp_path / "runs")])
    assert res.exit_code == 2 and "SQLite file" in res.output and "PostgreSQL" in res.output, res.output
    assert "run 1" not in res.output

