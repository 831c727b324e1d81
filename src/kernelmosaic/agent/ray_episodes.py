"""Episodes on Ray: episode actors run the solver's episode function (the agent's `run_episode`, one-shot
evaluation's `run_one_shot`), writing every step to the store by URL, with their verifier calls going to the
cluster's judges. The driver hands out tasks and collects results.

The store is the single source of truth: an episode whose actor died (a killed process, a lost node) is started
again on a fresh actor, and `run_episode` resumes it from its stored events (a step is committed once; replayed
writes of the same event are no-ops), so nothing is lost or recorded twice.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from kernelmosaic.agent.episode import MODEL_UNUSABLE, EpisodeContext, run_episode
from kernelmosaic.agent.guidance import GuidanceLibrary
from kernelmosaic.agent.runner import GenerateConfig, final_failures, task_flags
from kernelmosaic.models.base import ModelBackend
from kernelmosaic.runs.executor import Wrap
from kernelmosaic.store import Store
from kernelmosaic.store.records import EpisodeInfo
from kernelmosaic.tasks.schema import Task
from kernelmosaic.verify.config import VerifyConfig
from kernelmosaic.verify.ray.config import ScaleConfig
from kernelmosaic.verify.ray.placement import Placement

__all__ = ["EpisodeActor", "run_episodes"]

log = logging.getLogger(__name__)
Episode = Callable[[Task, EpisodeContext], Awaitable[EpisodeInfo]]
"""One episode of a task (a module-level function: Ray sends it to the actors by name)."""


class EpisodeActor:
    """Runs episodes (several at once: an async actor) with its own store connection, model backend and view of
    the judges."""

    def __init__(self, store_url: str, make_backend: Callable[[], ModelBackend], registry: Any,
                 scale: dict[str, Any], limiter: Any = None) -> None:
        from kernelmosaic.runs.limits import LimitedBackend
        from kernelmosaic.store import open_store
        from kernelmosaic.verify.ray.dispatch import Dispatcher

        self.store = open_store(store_url)
        backend = make_backend()
        self.backend = LimitedBackend(backend, limiter) if limiter is not None else backend
        self.dispatcher = Dispatcher(registry, ScaleConfig.model_validate(scale))
        self.library = GuidanceLibrary.load()
        self._verifiers: dict[str, Any] = {}

    def _verifier_for(self, verify: dict[str, Any], wrap: Wrap | None) -> Callable[[str], Any]:
        from kernelmosaic.verify.ray.verifier import RayVerifierSet

        key = f"{sorted(verify.items())}|{wrap!r}"
        if key not in self._verifiers:
            verifiers = RayVerifierSet(VerifyConfig.model_validate(verify), self.dispatcher)
            self._verifiers[key] = wrap(verifiers) if wrap is not None else verifiers
        return self._verifiers[key]

    async def run(self, task: Task, run_id: int, config: dict[str, Any], verify: dict[str, Any], flags: list[str],
                  wrap: Wrap | None = None, episode: Episode = run_episode) -> EpisodeInfo:
        generate = GenerateConfig.model_validate(config)
        verifier_for = self._verifier_for(verify, wrap)
        peaks = (lambda: verifier_for("fp32").device_peaks()) if generate.agent.device == "cuda" else None
        ctx = EpisodeContext(store=self.store, verifier_for=verifier_for, backend=self.backend, run_id=run_id,
                             config=generate.agent, out_dir=generate.out_dir, library=self.library, peaks=peaks,
                             run_config=config, task_flags=lambda _t: flags)
        return await episode(task, ctx)


def _limiter(config: GenerateConfig, scale: ScaleConfig) -> Any:
    from kernelmosaic.runs.limits import LIMITED_SCHEMES, endpoint_key, limiter_for

    if not scale.model_concurrency or config.model.partition(":")[0] not in LIMITED_SCHEMES:
        return None
    return limiter_for(endpoint_key(config.model, config.model_options), scale.model_concurrency)


async def run_episodes(tasks: Sequence[Task], *, store: Store, store_url: str,
                       make_backend: Callable[[], ModelBackend], run_id: int, config: GenerateConfig,
                       verify: VerifyConfig, registry: Any, scale: ScaleConfig, placement: Placement,
                       on_done: Callable[[EpisodeInfo], None] | None = None,
                       wrap: Wrap | None = None, episode: Episode = run_episode,
                       stop_when_unusable: bool = True) -> list[EpisodeInfo]:
    """`agent.runner.run_tasks` on the cluster: the run's unfinished episodes, each `episode`, `config.concurrency`
    at a time.

    With `stop_when_unusable`, an episode that ends `model_unusable` stops the run; one that could not start is
    logged and left pending; one whose actor died is tried again up to `scale.max_attempts` times (resumed from the
    store). Cancelling it (the first Ctrl-C) stops the actors with their episodes: each committed step stays
    committed."""
    import ray
    from ray.exceptions import RayError, RayTaskError

    config = config.model_copy(update={"out_dir": Path(config.out_dir).resolve()})  # actors have other cwds
    data, verify_data = config.model_dump(mode="json"), verify.model_dump(mode="json")
    limiter = _limiter(config, scale)
    make = ray.remote(EpisodeActor).options(num_cpus=placement.episode_cpus, num_gpus=placement.episode_gpus,
                                            max_concurrency=placement.episodes_per_actor)
    actors = [make.remote(store_url, make_backend, registry, scale.model_dump(mode="json"), limiter)
              for _ in range(placement.episode_actors)]
    busy = [0] * len(actors)
    pending = set(store.pending_tasks(run_id, [t.id for t in tasks], final_failures(config)))
    todo = deque(t for t in tasks if t.id in pending)
    attempts: dict[str, int] = {}
    flying: dict[asyncio.Future, tuple[Task, int, Any]] = {}
    infos: list[EpisodeInfo] = []
    stop = False
    try:
        while flying or (todo and not stop):
            while todo and not stop and len(flying) < config.concurrency:
                task, k = todo.popleft(), min(range(len(actors)), key=lambda i: busy[i])
                attempts[task.id] = attempts.get(task.id, 0) + 1
                busy[k] += 1
                ref = actors[k].run.remote(task, run_id, data, verify_data, task_flags(task), wrap, episode)
                flying[asyncio.wrap_future(ref.future())] = (task, k, actors[k])
            done, _ = await asyncio.wait(list(flying), return_when=asyncio.FIRST_COMPLETED)
            for future in done:
                task, k, actor = flying.pop(future)
                busy[k] -= 1
                try:
                    info = future.result()
                except RayTaskError:  # the episode could not even start (a bad task file)
                    log.exception("task %s: the episode could not be started", task.id)
                    continue
                except RayError as exc:  # the actor died with the episode in flight: resume it on a fresh actor
                    if actors[k] is actor:  # the first of its episodes to report it replaces it
                        ray.kill(actor, no_restart=True)
                        actors[k] = make.remote(store_url, make_backend, registry, scale.model_dump(mode="json"),
                                                limiter)
                    if attempts[task.id] >= scale.max_attempts:
                        log.error("task %s: its episode actor died %d times (last: %s); left pending", task.id,
                                  attempts[task.id], exc)
                    else:
                        log.warning("task %s: its episode actor died (%s); resuming it", task.id, type(exc).__name__)
                        todo.appendleft(task)
                    continue
                stop = stop or (stop_when_unusable and info.exit_reason == MODEL_UNUSABLE)
                infos.append(info)
                if on_done is not None:
                    on_done(info)
    finally:
        for actor in actors:
            ray.kill(actor, no_restart=True)
    return infos
