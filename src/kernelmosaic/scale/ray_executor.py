"""The Ray executor: joins (or starts) the cluster, places one judge per GPU through a `JudgeRegistry`, and runs
verification jobs (`Dispatcher`) and episodes (`episodes.run_episodes`) on it."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernelmosaic.contracts.verdict import Verdict
from kernelmosaic.scale.cluster import alive_nodes, check_store_for_nodes, connect, gpu_total
from kernelmosaic.scale.config import ScaleConfig
from kernelmosaic.scale.placement import plan_placement
from kernelmosaic.verify.config import VerifyConfig

if TYPE_CHECKING:  # the agent side is imported only when episodes run (verify-batch stays on the verifier's side)
    from kernelmosaic.agent.runner import GenerateConfig
    from kernelmosaic.contracts.episode_state import EpisodeState
    from kernelmosaic.models.base import ModelBackend
    from kernelmosaic.store import Store
    from kernelmosaic.store.records import EpisodeInfo
    from kernelmosaic.tasks.schema import Task

__all__ = ["RayExecutor"]

log = logging.getLogger(__name__)


class RayExecutor:
    name = "ray"

    def __init__(self, scale: ScaleConfig, *, device: str, model: str = "", concurrency: int = 1) -> None:
        from kernelmosaic.scale.judges import JudgeRegistry

        self.scale = scale
        self.ray = connect(scale)
        self.nodes = len(alive_nodes())
        self.placement = plan_placement(scale, gpu_total(), model, concurrency, device)
        self.registry = self.ray.remote(JudgeRegistry).options(num_cpus=0).remote(
            self.placement.judges, self.placement.judge_gpus, scale.judge_concurrency)
        self._dispatcher = None
        log.info("ray: %d node(s), %d judge(s) of %g GPU", self.nodes, self.placement.judges, self.placement.judge_gpus)

    @property
    def dispatcher(self):
        from kernelmosaic.scale.dispatch import Dispatcher

        if self._dispatcher is None:
            self._dispatcher = Dispatcher(self.registry, self.scale)  # waits for the judges to start
        return self._dispatcher

    def check_store(self, store_url: str) -> None:
        """Refuse a store the cluster's nodes cannot share (`StoreNotShared`)."""
        check_store_for_nodes(store_url, self.nodes)

    def verify_many(self, config: VerifyConfig, pairs: Sequence[tuple[Path, Path]], *,
                    seeded: bool = False) -> Iterator[tuple[int, Verdict]]:
        from kernelmosaic.scale.inputs import read_sources

        jobs = [(read_sources(problem, candidate), {}) for problem, candidate in pairs]
        yield from self.dispatcher.run(config, jobs)

    def verifier_set(self, base: VerifyConfig):
        from kernelmosaic.scale.verifier import RayVerifierSet

        return RayVerifierSet(base, self.dispatcher)

    def model_factory(self, spec: str, options: dict[str, Any]) -> Callable[[], ModelBackend]:
        """A factory each episode actor calls; a model served elsewhere is built here once first, so a bad spec
        fails before the run is created (an in-process `hf:` one loads only in its actors, on their GPUs)."""
        from kernelmosaic.models import get_model

        if spec.partition(":")[0] != "hf":
            get_model(spec, **options)
        return functools.partial(get_model, spec, **options)

    async def run_episodes(self, tasks: Sequence[Task], *, store: Store, store_url: str,
                           make_backend: Callable[[], ModelBackend], run_id: int, config: GenerateConfig,
                           verify: VerifyConfig, on_step: Callable[[str, EpisodeState], None] | None = None,
                           on_done: Callable[[EpisodeInfo], None] | None = None,
                           alternatives: bool = False) -> list[EpisodeInfo]:
        """`on_step` is not called: the actors report finished episodes only."""
        from kernelmosaic.scale.episodes import run_episodes

        self.check_store(store_url)
        await asyncio.to_thread(lambda: self.dispatcher)  # the judges are up before the first episode asks for one
        return await run_episodes(tasks, store=store, store_url=store_url, make_backend=make_backend,
                                  run_id=run_id, config=config, verify=verify, registry=self.registry,
                                  scale=self.scale, placement=self.placement, on_done=on_done,
                                  alternatives=alternatives)

    def replacements(self) -> int:
        """Judges replaced so far (died, or saw a CUDA error)."""
        return self.ray.get(self.registry.replacements.remote())

    def close(self) -> None:
        """Stop the judges (their workers with them); the cluster stays up."""
        try:
            for _, handle in self.ray.get(self.registry.judges.remote()):
                self.ray.kill(handle, no_restart=True)
            self.ray.kill(self.registry, no_restart=True)
        except self.ray.exceptions.RayError as exc:
            log.debug("closing the judges: %s", exc)

    def __enter__(self) -> RayExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
