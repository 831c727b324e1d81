"""Evaluation's solvers of the one run function (`runs.executor.Solver`, `executor.run_episodes`): one-shot (one write
per episode, judged once: `oneshot.run_one_shot`, in the agent's task loop here, `agent.runner.run_tasks`, or on a
cluster's episode actors, `agent.ray_episodes.run_episodes`) and judging given generations (each candidate judged
under `--seeds` verifiers: `judging.judge_generation`; no model, so in this process on every executor, judged by the
executor's verifiers: on Ray, the cluster's judges). Agent-mode evaluation runs the agent's own solver
(`agent.solver.AGENT`)."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from kernelmosaic.agent.ray_episodes import run_episodes
from kernelmosaic.agent.runner import run_tasks
from kernelmosaic.evaluate.generations import Generation
from kernelmosaic.evaluate.judging import judge_generation
from kernelmosaic.evaluate.oneshot import run_one_shot
from kernelmosaic.evaluate.samples import sample_id
from kernelmosaic.runs.executor import Solver

if TYPE_CHECKING:
    from kernelmosaic.agent.runner import GenerateConfig
    from kernelmosaic.store import Store
    from kernelmosaic.store.records import EpisodeInfo

__all__ = ["ONE_SHOT", "generations_solver"]

ONE_SHOT = Solver(here=functools.partial(run_tasks, episode=run_one_shot, stop_when_unusable=False),
                  on_ray=functools.partial(run_episodes, episode=run_one_shot, stop_when_unusable=False))


def generations_solver(origin: str) -> Solver:
    """Judging given generations; `origin` names where they came from in each trajectory (`generations:PATH`)."""
    return Solver(here=functools.partial(_judge_all, origin=origin))


async def _judge_all(generations: Sequence[Generation], *, store: Store, verifier_for: Sequence[Callable[[str], Any]],
                     run_id: int, config: GenerateConfig, on_done: Callable[[EpisodeInfo], None] | None = None,
                     origin: str, **_unused: Any) -> list[EpisodeInfo]:
    """Every generation the run has not judged yet, `config.concurrency` at a time in threads (a verdict blocks on
    the verifier's workers). `verifier_for`: one verifier source per seed (`harness.for_seeds`, the run's `wrap`).
    The model backend, peaks and step callback a model run gets are not used: there is no model."""
    todo = set(store.pending_tasks(run_id, [sample_id(g.task.id, g.sample) for g in generations], ("infra_error",)))

    def one(gen: Generation) -> EpisodeInfo:
        info = judge_generation(gen, store=store, run_id=run_id, out_dir=config.out_dir, device=config.agent.device,
                                verifiers=verifier_for, origin=origin)
        if on_done is not None:
            on_done(info)
        return info

    def judge_all() -> list[EpisodeInfo]:
        with ThreadPoolExecutor(max_workers=config.concurrency) as pool:
            return list(pool.map(one, [g for g in generations if sample_id(g.task.id, g.sample) in todo]))

    return await asyncio.to_thread(judge_all)
