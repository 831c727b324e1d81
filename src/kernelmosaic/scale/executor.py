"""The executor interface the batch, agent and evaluation commands call, and its registry: `local` (this machine,
the default) and `ray` (a Ray cluster, `ray_executor.py`). The agent side is imported only when episodes run, so
`verify-batch` stays on the verifier's side."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from kernelmosaic.scale.config import ScaleConfig
from kernelmosaic.verify.config import VerifyConfig
from kernelmosaic.verify.executor import LocalVerifyExecutor, VerifyExecutor

if TYPE_CHECKING:
    from kernelmosaic.agent.runner import GenerateConfig
    from kernelmosaic.contracts.episode_state import EpisodeState
    from kernelmosaic.models.base import ModelBackend
    from kernelmosaic.store import Store
    from kernelmosaic.store.records import EpisodeInfo
    from kernelmosaic.tasks.schema import Task

__all__ = ["Executor", "LocalExecutor", "EXECUTORS", "open_executor"]


class Executor(VerifyExecutor, Protocol):
    """Verification jobs (`verify_many`), verifiers for episodes (`verifier_set`), and whole episodes."""

    def check_store(self, store_url: str) -> None:
        """Refuse (ValueError) a store the executor's processes cannot all write to."""
        ...

    def model_factory(self, spec: str, options: dict[str, Any]) -> Callable[[], ModelBackend]:
        """Where episodes get their model backend. A model that runs here is built now, so a bad spec fails
        (`ModelError`) before a run is created."""
        ...

    def verifier_set(self, base: VerifyConfig) -> Any:
        """A context manager: `verifiers(precision)` with `device_peaks()`, as `agent.verifiers.VerifierSet`."""
        ...

    async def run_episodes(self, tasks: Sequence[Task], *, store: Store, store_url: str,
                           make_backend: Callable[[], ModelBackend], run_id: int, config: GenerateConfig,
                           verify: VerifyConfig, on_step: Callable[[str, EpisodeState], None] | None = None,
                           on_done: Callable[[EpisodeInfo], None] | None = None,
                           alternatives: bool = False) -> list[EpisodeInfo]:
        """The run's unfinished episodes of `tasks`, `config.concurrency` at a time (`agent.runner.run_tasks`);
        `alternatives`: timed verdicts are judged on derived shapes too (evaluation). Cancelling it stops them."""
        ...

    def close(self) -> None: ...

    def __enter__(self) -> Executor: ...

    def __exit__(self, *exc: object) -> None: ...


class LocalExecutor(LocalVerifyExecutor):
    """This machine: `Verifier`s in this process, episodes as asyncio tasks (`run_tasks`)."""

    def check_store(self, store_url: str) -> None:
        """Every writer is this process."""

    def model_factory(self, spec: str, options: dict[str, Any]) -> Callable[[], ModelBackend]:
        from kernelmosaic.models import get_model

        backend = get_model(spec, **options)  # built once: every episode shares it (an hf: model loads once)
        return lambda: backend

    def verifier_set(self, base: VerifyConfig) -> Any:
        from kernelmosaic.agent.verifiers import VerifierSet

        return VerifierSet(base)

    async def run_episodes(self, tasks: Sequence[Task], *, store: Store, store_url: str,
                           make_backend: Callable[[], ModelBackend], run_id: int, config: GenerateConfig,
                           verify: VerifyConfig, on_step: Callable[[str, EpisodeState], None] | None = None,
                           on_done: Callable[[EpisodeInfo], None] | None = None,
                           alternatives: bool = False) -> list[EpisodeInfo]:
        from kernelmosaic.agent.runner import run_tasks
        from kernelmosaic.agent.verifiers import VerifierSet
        from kernelmosaic.evaluate.harness import for_evaluation

        with VerifierSet(verify) as verifiers:
            verifier_for = for_evaluation(verifiers, True) if alternatives else verifiers
            # Host timing on CPU is only indicative, so achieved-vs-peak figures are shown for CUDA only.
            peaks = verifiers.device_peaks if config.agent.device == "cuda" else None
            return await run_tasks(tasks, store=store, verifier_for=verifier_for, backend=make_backend(),
                                   run_id=run_id, config=config, peaks=peaks, on_step=on_step, on_done=on_done)

    def close(self) -> None:
        """Nothing outlives a call."""

    def __enter__(self) -> LocalExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _ray(scale: ScaleConfig, **kw: Any) -> Executor:
    from kernelmosaic.scale.ray_executor import RayExecutor

    return RayExecutor(scale, **kw)


EXECUTORS: dict[str, Callable[..., Executor]] = {"local": lambda scale, **kw: LocalExecutor(), "ray": _ray}
"""Executor name -> factory(ScaleConfig, device=..., model=..., concurrency=...)."""


def open_executor(scale: ScaleConfig, *, device: str, model: str = "", concurrency: int = 1,
                  store_url: str | None = None) -> Executor:
    """The executor `scale.executor` names, ready for a run of `model` on `device` (`ray`: joined or started, its
    judges placed), `store_url` checked when given. Raises `RayUnavailable` / ValueError with a message for the
    user; nothing stays open then."""
    executor = EXECUTORS[scale.executor](scale, device=device, model=model, concurrency=concurrency)
    if store_url is not None:
        try:
            executor.check_store(store_url)
        except ValueError:
            executor.close()
            raise
    return executor

