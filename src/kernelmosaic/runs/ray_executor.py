"""The Ray executor of a run: the judges of `verify/ray/executor.py`, and the run's episodes on episode actors (the
solver's `on_ray`), their model built in each actor."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from kernelmosaic.runs.here import run_here
from kernelmosaic.verify.config import VerifyConfig
from kernelmosaic.verify.ray.executor import RayVerifyExecutor

if TYPE_CHECKING:
    from kernelmosaic.agent.runner import GenerateConfig
    from kernelmosaic.contracts.episode_state import EpisodeState
    from kernelmosaic.models.base import ModelBackend
    from kernelmosaic.runs.executor import Solver, Wrap
    from kernelmosaic.store import Store
    from kernelmosaic.store.records import EpisodeInfo
    from kernelmosaic.tasks.schema import Task

__all__ = ["RayExecutor"]

log = logging.getLogger(__name__)


class RayExecutor(RayVerifyExecutor):
    def model_factory(self, spec: str, options: dict[str, Any]) -> Callable[[], ModelBackend]:
        """A factory each episode actor calls; a model served elsewhere is built here once first, so a bad spec
        fails before the run is created (an in-process `hf:` one loads only in its actors, on their GPUs)."""
        from kernelmosaic.models import get_model

        if spec.partition(":")[0] != "hf":
            get_model(spec, **options)
        return functools.partial(get_model, spec, **options)

    async def run_episodes(self, tasks: Sequence[Task], *, solver: Solver, store: Store, store_url: str,
                           make_backend: Callable[[], ModelBackend] | None, run_id: int, config: GenerateConfig,
                           verify: VerifyConfig, on_step: Callable[[str, EpisodeState], None] | None = None,
                           on_done: Callable[[EpisodeInfo], None] | None = None,
                           wrap: Wrap | None = None) -> list[EpisodeInfo]:
        """On episode actors (`solver.on_ray`), where `on_step` is not called: the actors report finished episodes
        only; or, for a solver without one, here (`run_here`)."""
        await asyncio.to_thread(lambda: self.dispatcher)  # the judges are up before the first episode asks for one
        if solver.on_ray is None:  # episodes in this process (the only writer of the store), judged by the judges
            return await run_here(self, tasks, solver=solver, store=store, make_backend=make_backend, run_id=run_id,
                                  config=config, verify=verify, on_step=on_step, on_done=on_done, wrap=wrap)
        self.check_store(store_url)
        return await solver.on_ray(tasks, store=store, store_url=store_url, make_backend=make_backend,
                                   run_id=run_id, config=config, verify=verify, registry=self.registry,
                                   scale=self.scale, placement=self.placement, on_done=on_done, wrap=wrap)

    def __enter__(self) -> RayExecutor:
        return self
