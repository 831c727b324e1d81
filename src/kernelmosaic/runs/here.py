"""A run's episodes in this process (`Solver.here`), judged by an executor's verifier set: every run on the local
executor, and on Ray the solvers that have no episode actors of their own (`Solver.on_ray` None)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from kernelmosaic.verify.config import VerifyConfig

if TYPE_CHECKING:
    from kernelmosaic.agent.runner import GenerateConfig
    from kernelmosaic.contracts.episode_state import EpisodeState
    from kernelmosaic.models.base import ModelBackend
    from kernelmosaic.runs.executor import Executor, Solver, Wrap
    from kernelmosaic.store import Store
    from kernelmosaic.store.records import EpisodeInfo
    from kernelmosaic.tasks.schema import Task

__all__ = ["run_here"]


async def run_here(executor: Executor, tasks: Sequence[Task], *, solver: Solver, store: Store,
                   make_backend: Callable[[], ModelBackend] | None, run_id: int, config: GenerateConfig,
                   verify: VerifyConfig,
                   on_step: Callable[[str, EpisodeState], None] | None = None,
                   on_done: Callable[[EpisodeInfo], None] | None = None, wrap: Wrap | None = None) -> list[EpisodeInfo]:
    """`solver.here` in this process, judged by `executor`'s verifier set for `verify` (`wrap`ped when given);
    `make_backend` None: a run without a model (judging given generations)."""
    with executor.verifier_set(verify) as verifiers:
        verifier_for = wrap(verifiers) if wrap is not None else verifiers
        # Host timing on CPU is only indicative, so achieved-vs-peak figures are shown for CUDA only.
        peaks = verifiers.device_peaks if config.agent.device == "cuda" else None
        return await solver.here(tasks, store=store, verifier_for=verifier_for, backend=make_backend() if make_backend else None,
                                 run_id=run_id,
                                 config=config, peaks=peaks, on_step=on_step, on_done=on_done)
