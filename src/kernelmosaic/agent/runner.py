"""A generate run: many episodes at once (asyncio, K at a time) sharing one store, one verifier and one backend."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from kernelmosaic.agent.config import AgentConfig
from kernelmosaic.agent.episode import INFRA_ERROR, MODEL_UNUSABLE, EpisodeContext, run_episode
from kernelmosaic.agent.guidance import GuidanceLibrary
from kernelmosaic.contracts.episode_state import EpisodeState
from kernelmosaic.contracts.trajectory import Trajectory
from kernelmosaic.contracts.verified import AUDIT_FAILED
from kernelmosaic.contracts.verifier import Verifier
from kernelmosaic.models.base import ModelBackend
from kernelmosaic.runs.config import RunConfig
from kernelmosaic.runs.selection import select_tasks
from kernelmosaic.store import Store
from kernelmosaic.store.records import EpisodeInfo
from kernelmosaic.tasks.audit.cache import audit_failure
from kernelmosaic.tasks.schema import Task

__all__ = ["GenerateConfig", "replayable", "recorded_device", "recorded_models", "run_tasks",
           "start_or_resume_run", "task_flags", "gate_on_audit", "final_failures", "plan_tasks", "TaskPlan",
           "spec_problem"]

log = logging.getLogger(__name__)


class GenerateConfig(RunConfig):
    """One `kernelmosaic generate` run; stored with the run so `--resume` continues with the same settings."""

    model: str = "replay:bundled"
    """Model spec, e.g. `openai:NAME`, `hf:PATH`, `replay:FILE`, `scripted:NAME`."""
    agent: AgentConfig = Field(default_factory=AgentConfig)
    """Episode configuration (its `device` is the run's)."""
    include_flagged: bool = False
    """Also run tasks whose audit failed; their solutions are kept, marked `task-audit-failed`, never counted."""
    retry_failed: bool = False
    """On resume, also retry episodes that failed with an infrastructure error (a bug does not fix itself)."""
    origin_model: str = ""
    """For `replay:`: the model(s) that wrote the recordings (hand-written demonstrations say so)."""

    def judged_on(self) -> str:
        return self.agent.device


def _recordings(model: str) -> list[Trajectory] | None:
    scheme, _, target = model.partition(":")
    if scheme != "replay":
        return None
    from kernelmosaic.models.replay import BUNDLED_NAME, bundled_path, load_trajectories

    return load_trajectories(bundled_path() if target == BUNDLED_NAME else Path(target))


def recorded_device(model: str) -> str | None:
    """The device a `replay:` recording was made on (its candidates are written for it); None otherwise or if mixed."""
    recordings = _recordings(model)
    devices = {(t.config.get("agent") or {}).get("device") for t in recordings or []}
    return devices.pop() if len(devices) == 1 and None not in devices else None


def recorded_models(model: str) -> str:
    """For `replay:`, the model(s) that wrote the recordings, comma-separated; "" for other models."""
    recordings = _recordings(model)
    return ", ".join(sorted({t.origin_model or t.model for t in recordings or []}))


def task_flags(task: Task) -> list[str]:
    """The flags an episode of `task` carries into the store: `task-audit-failed` when its audit failed."""
    return [AUDIT_FAILED] if audit_failure(task) else []


def gate_on_audit(tasks: Sequence[Task], include_flagged: bool) -> tuple[list[Task], dict[str, str]]:
    """The tasks to run, and the skipped ones with the reason (failed audits, unless `include_flagged`)."""
    failed = {t.id: why for t in tasks if (why := audit_failure(t))}
    return ([t for t in tasks if include_flagged or t.id not in failed], {} if include_flagged else failed)


def spec_problem(task: Task) -> str:
    """Why the task's math spec cannot be shown to a model ("" when it parses or there is none)."""
    if not task.forms.spec.strip():
        return ""
    from kernelmosaic.tasks.spec import SpecError, parse_spec

    try:
        parse_spec(task.forms.spec, f"{task.id}/spec.km")
    except SpecError as exc:
        return f"spec.km does not parse: {exc}"
    return ""


class TaskPlan(BaseModel):
    """Which tasks a run takes, and why each other asked-for task is left out (said on screen)."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    selected: list[Task]
    skipped: dict[str, str] = Field(default_factory=dict)
    """Task id -> why it does not run."""
    notes: list[str] = Field(default_factory=list)


def plan_tasks(tasks: Sequence[Task], config: GenerateConfig) -> TaskPlan:
    """Pick by id (unknown ids are an error naming them), then drop what cannot or must not run, each with its
    reason: no recording in a replay, a failed audit (unless included), a spec that does not parse; then the limit."""
    chosen = select_tasks(tasks, config.task_ids)
    skipped: dict[str, str] = {}
    notes: list[str] = []
    recorded = {t.id for t in replayable(chosen, config.model)}
    if len(recorded) < len(chosen):
        missing = [t.id for t in chosen if t.id not in recorded]
        if config.task_ids:
            skipped.update({i: f"{config.model} holds no recording of it" for i in missing})
        else:
            notes.append(f"{config.model} holds recordings of {len(recorded)} of {len(chosen)} tasks; running those")
        chosen = [t for t in chosen if t.id in recorded]
    chosen, failed = gate_on_audit(chosen, config.include_flagged)
    skipped.update(failed)
    bad_specs = {t.id: why for t in chosen if (why := spec_problem(t))}
    skipped.update(bad_specs)
    chosen = [t for t in chosen if t.id not in bad_specs]
    return TaskPlan(selected=chosen[: config.limit] if config.limit else chosen, skipped=skipped, notes=notes)


def final_failures(config: GenerateConfig) -> tuple[str, ...]:
    """Failed episodes a resume does not retry: infrastructure errors, unless `retry_failed`."""
    return () if config.retry_failed else (INFRA_ERROR,)


def replayable(tasks: Sequence[Task], model: str) -> list[Task]:
    """For a `replay:` model, only the tasks its recording holds (others could only fail); other models: all."""
    recordings = _recordings(model)
    if recordings is None:
        return list(tasks)
    recorded = {t.task_id for t in recordings}
    return [t for t in tasks if t.id in recorded]


def start_or_resume_run(store: Store, config: GenerateConfig | None, resume: int | Literal["latest"] | None,
                        name: str = "generate") -> tuple[int, GenerateConfig]:
    """A new run for `config`, or the run to resume (by id, or the latest one) with its stored configuration."""
    if resume is None:
        assert config is not None
        return store.create_run(name, config.model, config.tasks, config), config
    run = store.latest_run() if resume == "latest" else store.get_run(int(resume))
    if run is None:
        raise ValueError(f"no run to resume in {store.url}")
    return run.id, GenerateConfig.model_validate(run.config)


async def run_tasks(tasks: Sequence[Task], *, store: Store, verifier_for: Callable[[str], Verifier], backend: ModelBackend,
                    run_id: int, config: GenerateConfig, peaks: Callable[[], object] | None = None,
                    on_step: Callable[[str, EpisodeState], None] | None = None,
                    on_done: Callable[[EpisodeInfo], None] | None = None,
                    episode: Callable[[Task, EpisodeContext], Awaitable[EpisodeInfo]] = run_episode,
                    stop_when_unusable: bool = True) -> list[EpisodeInfo]:
    """Run the episodes of `tasks` that the run has not finished yet, `config.concurrency` at a time; `episode`:
    what one episode is (the agent's loop, `run_episode`; or one-shot evaluation's single write).

    Returns the finished episodes. With `stop_when_unusable`, an episode that ends `model_unusable` (a wrong key,
    a missing model) stops the run: no further episode starts (one-shot evaluation counts each such episode as the
    operator's and goes on). A task whose episode could not even start is logged and left pending.
    """
    ctx = EpisodeContext(store=store, verifier_for=verifier_for, backend=backend, run_id=run_id, config=config.agent,
                         out_dir=config.out_dir, library=GuidanceLibrary.load(), peaks=peaks, on_step=on_step,
                         run_config=config.model_dump(mode="json"),
                         task_flags=task_flags)
    pending = set(store.pending_tasks(run_id, [t.id for t in tasks], final_failures(config)))
    gate = asyncio.Semaphore(config.concurrency)
    stop = asyncio.Event()

    async def one(task: Task) -> EpisodeInfo | None:
        async with gate:
            if stop.is_set():
                return None
            try:
                info = await episode(task, ctx)
            except Exception:  # noqa: BLE001 - one task that cannot even start (bad task file, refused resume) must not stop the others
                log.exception("task %s: the episode could not be started", task.id)
                return None
        if info.exit_reason == MODEL_UNUSABLE and stop_when_unusable:
            stop.set()
        if on_done is not None:
            on_done(info)
        return info

    infos = await asyncio.gather(*(one(t) for t in tasks if t.id in pending))
    return [info for info in infos if info is not None]
