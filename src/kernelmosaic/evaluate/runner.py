"""An evaluation run: tasks (or generations) in, episodes and verdicts in the store out; resumable."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable, Sequence

from kernelmosaic.agent.config import AgentConfig, Budgets
from kernelmosaic.agent.runner import GenerateConfig
from kernelmosaic.agent.solver import AGENT
from kernelmosaic.evaluate.baselines import BaselineCache
from kernelmosaic.evaluate.config import EvalConfig
from kernelmosaic.evaluate.generations import Generation
from kernelmosaic.evaluate.harness import for_seeds, with_alternatives
from kernelmosaic.evaluate.records import load_records
from kernelmosaic.evaluate.samples import sample_tasks
from kernelmosaic.evaluate.solvers import ONE_SHOT, generations_solver
from kernelmosaic.models.base import ModelBackend
from kernelmosaic.runs.executor import Executor
from kernelmosaic.store import Store
from kernelmosaic.store.records import EpisodeInfo
from kernelmosaic.tasks.schema import Task

__all__ = ["run_model", "run_generations", "record_baselines", "RUN_NAME"]

log = logging.getLogger(__name__)
RUN_NAME = "evaluate"
OnDone = Callable[[EpisodeInfo], None]


def run_model(tasks: Sequence[Task], *, store: Store, run_id: int, config: EvalConfig,
              make_backend: Callable[[], ModelBackend], executor: Executor, on_done: OnDone | None = None,
              store_url: str = "") -> list[EpisodeInfo]:
    """Every sample of every task through the one run function (`executor.run_episodes`) with the mode's solver:
    the agent harness (`agent`: on a Ray executor, on its episode actors, writing to `store_url`) or one write
    judged once (`one-shot`: in this process, candidates judged by `executor`'s verifiers)."""
    episodes = sample_tasks(list(tasks), config.samples)
    agent = AgentConfig(device=config.device, budgets=Budgets(max_turns=config.max_turns))
    generate = GenerateConfig(tasks=config.tasks, model=config.model, model_options=config.model_options,
                              concurrency=config.concurrency, out_dir=config.out_dir, agent=agent,
                              compile_baseline=config.compile_baseline, include_flagged=True)
    return asyncio.run(executor.run_episodes(episodes, solver=AGENT if config.mode == "agent" else ONE_SHOT,
                                             store=store, store_url=store_url, make_backend=make_backend,
                                             run_id=run_id, config=generate, verify=config.verify_config(),
                                             on_done=on_done, wrap=with_alternatives if config.alternatives else None))


def run_generations(generations: Sequence[Generation], *, store: Store, run_id: int, config: EvalConfig,
                    executor: Executor, on_done: OnDone | None = None) -> list[EpisodeInfo]:
    """Judge every candidate not yet judged in the run, `config.concurrency` at a time, through the one run function
    with the generations solver, under `config.seeds` verifiers of `executor`."""
    generate = GenerateConfig(tasks=config.tasks, concurrency=config.concurrency, out_dir=config.out_dir,
                              agent=AgentConfig(device=config.device), compile_baseline=config.compile_baseline,
                              include_flagged=True)
    wrap = functools.partial(for_seeds, seeds=config.seeds, alternatives=config.alternatives)
    return asyncio.run(executor.run_episodes(generations, solver=generations_solver(f"generations:{config.generations}"),
                                             store=store, store_url="", make_backend=None, run_id=run_id,
                                             config=generate, verify=config.verify_config(), on_done=on_done,
                                             wrap=wrap))


def record_baselines(store: Store, run_id: int, cache: BaselineCache | None = None) -> int:
    """Add the run's timed verdicts' baselines to this machine's cache; returns the entries added."""
    _, records = load_records(store, run_id)
    verdicts = [j.verdict for r in records for j in r.judged if j.verdict.accepted and j.verdict.timing]
    return (cache or BaselineCache()).record(verdicts, run_id)
