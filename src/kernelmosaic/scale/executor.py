"""The executor interface the batch, agent and evaluation runners call, and its registry: `local` (this machine,
the default, unchanged behaviour) and `ray` (a Ray cluster, `ray_executor.py`)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from kernelmosaic.agent.runner import GenerateConfig, run_tasks
from kernelmosaic.agent.verifiers import VerifierSet
from kernelmosaic.models.base import ModelBackend
from kernelmosaic.scale.config import ScaleConfig
from kernelmosaic.store import Store
from kernelmosaic.store.records import EpisodeInfo
from kernelmosaic.tasks.schema import Task
from kernelmosaic.verify.config import VerifyConfig
from kernelmosaic.verify.executor import LocalVerifyExecutor, VerifyExecutor

__all__ = ["Executor", "LocalExecutor", "EXECUTORS", "open_executor"]


class Executor(VerifyExecutor, Protocol):
    """Verification jobs (`verify_many`), verifiers for episodes (`verifier_set`), and whole episodes."""

    def verifier_set(self, base: VerifyConfig) -> contextlib.AbstractContextManager[Callable[[str], Any]]:
        """`verifiers(precision)` with `device_peaks()`, as `agent.verifiers.VerifierSet`."""
        ...

    def run_episodes(self, tasks: Sequence[Task], *, store: Store, store_url: str,
                     make_backend: Callable[[], ModelBackend], run_id: int, config: GenerateConfig,
                     verify: VerifyConfig, task_flags: Callable[[Task], list[str]],
                     on_done: Callable[[EpisodeInfo], None] | None = None,
                     alternatives: bool = False) -> list[EpisodeInfo]:
        """The run's unfinished episodes of `tasks`, `config.concurrency` at a time (`agent.runner.run_tasks`)."""
        ...

    def close(self) -> None: ...


class LocalExecutor(LocalVerifyExecutor):
    """This machine: `Verifier`s in this process, episodes as asyncio tasks (`run_tasks`)."""

    def verifier_set(self, base: VerifyConfig) -> VerifierSet:
        return VerifierSet(base)

    def run_episodes(self, tasks: Sequence[Task], *, store: Store, store_url: str,
                     make_backend: Callable[[], ModelBackend], run_id: int, config: GenerateConfig,
                     verify: VerifyConfig, task_flags: Callable[[Task], list[str]],
                     on_done: Callable[[EpisodeInfo], None] | None = None,
                     alternatives: bool = False) -> list[EpisodeInfo]:
        with VerifierSet(verify) as verifiers:
            verifier_for: Callable[[str], Any] = verifiers
            if alternatives:
                from kernelmosaic.evaluate.harness import EvalVerifier

                verifier_for = lambda precision: EvalVerifier(verifiers(precision), True)  # noqa: E731
            return asyncio.run(run_tasks(tasks, store=store, verifier_for=verifier_for, backend=make_backend(),
                                         run_id=run_id, config=config, on_done=on_done))

    def close(self) -> None:
        """Nothing outlives a call."""


def _ray(scale: ScaleConfig, **kw: Any) -> Executor:
    from kernelmosaic.scale.ray_executor import RayExecutor

    return RayExecutor(scale, **kw)


EXECUTORS: dict[str, Callable[..., Executor]] = {"local": lambda scale, **kw: LocalExecutor(), "ray": _ray}
"""Executor name -> factory(ScaleConfig, device=..., model=..., concurrency=...)."""


def open_executor(scale: ScaleConfig, *, device: str, model: str = "", concurrency: int = 1) -> Executor:
    """The executor `scale.executor` names, ready for a run of `model` on `device` (`ray`: joined or started, its
    judges placed). Raises `RayUnavailable` / ValueError with a message for the user."""
    return EXECUTORS[scale.executor](scale, device=device, model=model, concurrency=concurrency)

