"""Episodes on Ray (the CPU device, the real verifier on judge actors): an episode actor killed mid-episode has its
episode resumed on a fresh actor, and the store ends with exactly one finished episode per task, each step once.
The store is PostgreSQL where the machine can start a throwaway cluster, else SQLite (one node)."""

from __future__ import annotations

import asyncio
import functools
import os
import sys
from pathlib import Path

import pytest
from ray import cloudpickle

from kernelmosaic.agent import AgentConfig, GenerateConfig
from kernelmosaic.agent.solver import AGENT
from kernelmosaic.contracts.messages import Message, ToolCall
from kernelmosaic.contracts.trajectory import ToolCallEvent, ToolResultEvent
from kernelmosaic.models.scripted import ScriptedModel
from kernelmosaic.runs.ray_executor import RayExecutor
from kernelmosaic.store import open_store
from kernelmosaic.verify import VerifyConfig
from kernelmosaic.verify.ray.config import ScaleConfig
from tests.agent.agent_kit import make_task
from tests.agent.e2e_kit import GOOD, PROBLEM
from tests.store.pg_cluster import ThrowawayCluster, can_start

pytestmark = pytest.mark.slow
cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the script's functions travel to the episode actors


@pytest.fixture(scope="module")
def store_url(tmp_path_factory):
    if not can_start():
        yield f"sqlite:///{tmp_path_factory.mktemp('store') / 'km.db'}"
        return
    cluster = ThrowawayCluster()
    try:
        yield cluster.start()
    finally:
        cluster.stop()


def _call(name: str, n: int, **arguments) -> Message:
    import json

    return Message(role="assistant", content=f"calling {name}",
                   tool_calls=[ToolCall(id=f"call_{n}", name=name, arguments=arguments, raw_arguments=json.dumps(arguments))])


def _first_reply(marker: str, messages: list[Message]) -> Message:
    """The first model call of the run kills its episode actor's process (once: a marker file remembers it)."""
    if not Path(marker).exists():
        Path(marker).write_text("died here\n")
        os._exit(1)
    return _call("write_candidate", 0, source=GOOD)


def _on_ray(store, store_url: str, solver, script: list, task_id: str, tmp_path) -> tuple[int, list]:
    """A new run of one ReLU task on the Ray executor, the scripted model answering; its id and finished episodes."""
    config = GenerateConfig(tasks="inline", model=f"scripted:{task_id}", out_dir=tmp_path / "runs", concurrency=1,
                            agent=AgentConfig(device="cpu"))
    # three trials: fewer weakens the judgement (verify/strength.py) and the episode could keep no verified best
    verify = VerifyConfig(device="cpu", trials=3, timing_budget_ms=20, timing_rounds=1, compile_baseline=False)
    tasks = [make_task(task_id, reference=PROBLEM, small={"n": 1000})]
    run_id = store.create_run(task_id, config.model, config.tasks, config)
    with RayExecutor(ScaleConfig(executor="ray"), device="cpu", model=config.model, concurrency=1) as executor:
        return run_id, asyncio.run(executor.run_episodes(
            tasks, solver=solver, store=store, store_url=store_url,
            make_backend=functools.partial(ScriptedModel, script, config.model),
            run_id=run_id, config=config, verify=verify))


def test_an_episode_whose_actor_died_is_resumed_and_stored_once(ray_cluster, store_url, tmp_path):
    marker = tmp_path / "died-once"
    script = [functools.partial(_first_reply, str(marker)), _call("test", 1), _call("submit", 2)]
    with open_store(store_url) as store:
        run_id, infos = _on_ray(store, store_url, AGENT, script, "ray_relu", tmp_path)
        assert marker.exists()  # an actor did die mid-episode
        assert [(i.task_id, i.exit_reason) for i in infos] == [("ray_relu", "submitted")]
        episodes = store.list_episodes(run_id)
        assert [e.task_id for e in episodes] == ["ray_relu"]  # one episode, resumed, not a second one
        for episode in episodes:
            trajectory = store.load_trajectory(episode.id)
            calls = [e.call.name for e in trajectory.events if isinstance(e, ToolCallEvent)]
            assert calls == ["write_candidate", "test", "submit"], calls  # each step once
            results = [e for e in trajectory.events if isinstance(e, ToolResultEvent) and e.verdict is not None]
            assert results and all(r.verdict.accepted for r in results)
            assert "ray judge" in results[0].verdict.workers.served_by
            assert trajectory.best is not None and episode.status == "done"
        assert store.pending_tasks(run_id, ["ray_relu"]) == []


def _write_from(pid_file: str, messages: list[Message]) -> Message:
    """The one-shot reply, writing down which process asked the model."""
    Path(pid_file).write_text(str(os.getpid()))
    return _call("write_candidate", 0, source=GOOD)


def test_one_shot_episodes_run_on_episode_actors(ray_cluster, store_url, tmp_path):
    """Evaluation's one-shot solver on Ray: its episode runs in an episode actor (the model is asked in another
    process), is judged by the cluster's judges, and is stored once as `judged`."""
    from kernelmosaic.evaluate.solvers import ONE_SHOT

    pid_file = tmp_path / "asked-by"
    with open_store(store_url) as store:
        run_id, infos = _on_ray(store, store_url, ONE_SHOT, [functools.partial(_write_from, str(pid_file))],
                                "ray_one_shot_relu", tmp_path)
        assert int(pid_file.read_text()) != os.getpid()  # asked from an episode actor, not from this process
        assert [(i.task_id, i.exit_reason) for i in infos] == [("ray_one_shot_relu", "judged")]
        [episode] = store.list_episodes(run_id)
        trajectory = store.load_trajectory(episode.id)
        assert [e.call.name for e in trajectory.events if isinstance(e, ToolCallEvent)] == ["write_candidate"]
        [result] = [e for e in trajectory.events if isinstance(e, ToolResultEvent) and e.verdict is not None]
        assert result.verdict.accepted and "ray judge" in result.verdict.workers.served_by
