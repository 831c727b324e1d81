"""`verify-batch --executor ray`: judges on a Ray cluster (joined or started, placed by `placement.py`), verifying
pairs through the dispatcher; the run layer's Ray executor (`runs/ray_executor.py`) adds episodes on top."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from kernelmosaic.contracts.verdict import Verdict
from kernelmosaic.verify.config import VerifyConfig
from kernelmosaic.verify.executor import LocalVerifyExecutor, VerifyExecutor
from kernelmosaic.verify.ray.cluster import alive_nodes, check_store_for_nodes, connect, gpu_total
from kernelmosaic.verify.ray.config import ScaleConfig
from kernelmosaic.verify.ray.placement import plan_placement

__all__ = ["RayVerifyExecutor", "open_verify_executor"]

log = logging.getLogger(__name__)


class RayVerifyExecutor:
    name = "ray"

    def __init__(self, scale: ScaleConfig, *, device: str, model: str = "", concurrency: int = 1) -> None:
        from kernelmosaic.verify.ray.judges import JudgeRegistry

        self.scale = scale
        self.ray = connect(scale)
        self.nodes = len(alive_nodes())
        self.placement = plan_placement(scale, gpu_total(), model, concurrency, device)
        self.registry = self.ray.remote(JudgeRegistry).options(num_cpus=0).remote(
            self.placement.judges, self.placement.judge_gpus, scale.judge_concurrency)
        self._dispatcher = None
        log.info("ray: %d node(s), %d judge(s) of %g GPU", self.nodes, self.placement.judges, self.placement.judge_gpus)

    @property
    def dispatcher(self) -> Any:
        from kernelmosaic.verify.ray.dispatch import Dispatcher

        if self._dispatcher is None:
            self._dispatcher = Dispatcher(self.registry, self.scale)  # waits for the judges to start
        return self._dispatcher

    def check_store(self, store_url: str) -> None:
        """Refuse a store the cluster's nodes cannot share (`StoreNotShared`)."""
        check_store_for_nodes(store_url, self.nodes)

    def verify_many(self, config: VerifyConfig, pairs: Sequence[tuple[Path, Path]], *,
                    seeded: bool = False) -> Iterator[tuple[int, Verdict]]:
        from kernelmosaic.verify.ray.inputs import read_sources

        jobs = [(read_sources(problem, candidate), {}) for problem, candidate in pairs]
        yield from self.dispatcher.run(config, jobs)

    def verifier_set(self, base: VerifyConfig) -> Any:
        from kernelmosaic.verify.ray.verifier import RayVerifierSet

        return RayVerifierSet(base, self.dispatcher)

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

    def __enter__(self) -> RayVerifyExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_verify_executor(scale: ScaleConfig, *, device: str) -> VerifyExecutor:
    """Where `verify-batch` judges: this machine's pool (`local`) or judges on a Ray cluster (`ray`), as
    `scale.executor` says. Raises `RayUnavailable` / ValueError with a message for the user."""
    if scale.executor == "ray":
        return RayVerifyExecutor(scale, device=device)
    return LocalVerifyExecutor()
