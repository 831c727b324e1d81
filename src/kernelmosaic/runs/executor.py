"""The executor interface `generate` and `evaluate` open, and its registry: `local` (this machine, the default) and
`ray` (a Ray cluster, `ray_executor.py`). The episodes are the caller's: a `Solver` says how to run them here and in
episode actors, and `wrap` what they judge with, so this layer imports neither the agent nor evaluation."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from kernelmosaic.runs.here import run_here
from kernelmosaic.verify import verifier_set
from kernelmosaic.verify.config import VerifyConfig
from kernelmosaic.verify.executor import LocalVerifyExecutor, VerifyExecutor
from kernelmosaic.verify.ray.config import ScaleConfig

if TYPE_CHECKING:
    from kernelmosaic.agent.runner import GenerateConfig
    from kernelmosaic.contracts.episode_state import EpisodeState
    from kernelmosaic.models.base import ModelBackend
    from kernelmosaic.store import Store
    from kernelmosaic.store.records import EpisodeInfo
    from kernelmosaic.tasks.schema import Task

__all__ = ["Executor", "LocalExecutor", "EXECUTORS", "Solver", "open_executor"]


@dataclass(frozen=True)
class Solver:
    """How a run's episodes are run, supplied by the layer that owns them (`agent.solver.AGENT`, the agent's loop;
    `evaluate.solvers.ONE_SHOT`, one write judged once; `evaluate.solvers.generations_solver`, given candidates
    judged, with no model: `make_backend` None).

    `here(tasks, *, store, verifier_for, backend, run_id, config, peaks, on_step, on_done)`: in this process,
    `config.concurrency` at a time. `on_ray(tasks, *, store, store_url, make_backend, run_id, config, verify,
    registry, scale, placement, on_done, wrap)`: on a cluster's episode actors; None: in this process on every
    executor, judged by the executor's verifiers (on Ray, the cluster's judges). Both return the finished
    episodes' `EpisodeInfo`s."""

    here: Callable[..., Awaitable[list[EpisodeInfo]]]
    on_ray: Callable[..., Awaitable[list[EpisodeInfo]]] | None = None


Wrap = Callable[[Any], Any]
"""Turns a verifier set into what episodes judge with (evaluation: `evaluate.harness.with_alternatives`, which also
judges derived shapes); a module-level function, since Ray sends it to episode actors by name."""


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
        """A context manager: `verifiers(precision)` with `device_peaks()`, as `verify.verifier_set.VerifierSet`."""
        ...

    async def run_episodes(self, tasks: Sequence[Task], *, solver: Solver, store: Store, store_url: str,
                           make_backend: Callable[[], ModelBackend] | None, run_id: int, config: GenerateConfig,
                           verify: VerifyConfig, on_step: Callable[[str, EpisodeState], None] | None = None,
                           on_done: Callable[[EpisodeInfo], None] | None = None,
                           wrap: Wrap | None = None) -> list[EpisodeInfo]:
        """The run's unfinished episodes of `tasks`, `config.concurrency` at a time, run by `solver`; `wrap`: what
        they judge with, from the executor's verifier set (default: the set itself). Cancelling it stops them."""
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
        return verifier_set.VerifierSet(base)

    async def run_episodes(self, tasks: Sequence[Task], *, solver: Solver, store: Store, store_url: str,
                           make_backend: Callable[[], ModelBackend] | None, run_id: int, config: GenerateConfig,
                           verify: VerifyConfig, on_step: Callable[[str, EpisodeState], None] | None = None,
                           on_done: Callable[[EpisodeInfo], None] | None = None,
                           wrap: Wrap | None = None) -> list[EpisodeInfo]:
        return await run_here(self, tasks, solver=solver, store=store, make_backend=make_backend, run_id=run_id,
                              config=config, verify=verify, on_step=on_step, on_done=on_done, wrap=wrap)

    def __enter__(self) -> LocalExecutor:
        return self


def _ray(scale: ScaleConfig, **kw: Any) -> Executor:
    from kernelmosaic.runs.ray_executor import RayExecutor

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

