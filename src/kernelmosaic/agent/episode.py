"""Set up one episode of one task (problem file, opening messages, or the recorded state on resume) and run it."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernelmosaic.agent.config import AgentConfig
from kernelmosaic.agent.guidance import GuidanceLibrary
from kernelmosaic.agent.loop import Agent
from kernelmosaic.agent.prompts import system_prompt, task_prompt
from kernelmosaic.agent.tools import Toolbox
from kernelmosaic.contracts.episode_state import EpisodeState
from kernelmosaic.contracts.hashing import problem_hash
from kernelmosaic.contracts.messages import Message
from kernelmosaic.contracts.results import DevicePeaks
from kernelmosaic.contracts.tool_specs import TOOL_SPECS
from kernelmosaic.contracts.trajectory import Event, GuidanceEvent, MessageEvent, Trajectory
from kernelmosaic.contracts.verifier import Verifier
from kernelmosaic.models.base import ModelBackend, ModelError
from kernelmosaic.runs.recorder import Recorder
from kernelmosaic.store import Store
from kernelmosaic.store.records import EpisodeInfo
from kernelmosaic.tasks.schema import Task
from kernelmosaic.verify.stopping import Stopped, stop_requested

__all__ = ["EpisodeContext", "run_episode", "finish_model_failure", "task_sha256", "run_dir", "MODEL_UNUSABLE", "TRANSIENT",
           "INFRA_ERROR"]

log = logging.getLogger(__name__)
MODEL_UNUSABLE = "model_unusable"
"""Exit reason: the backend refused for a reason no retry fixes (authentication, configuration); the run stops."""
TRANSIENT = "model_transient"
"""Exit reason: the server was down or throttling after retries; says nothing about the model; resumed later."""
INFRA_ERROR = "infra_error"
"""Exit reason: the verifier or the store broke (a bug); final, so a resume does not repeat it silently."""


def task_sha256(task: Task) -> str:
    """Identity of the task's content (reference, spec, statement), so a resume against an edited task is refused."""
    h = task.hashes
    return hashlib.sha256(f"{h.reference}:{h.spec}:{h.nl}".encode()).hexdigest()


def run_dir(out_dir: Path, run_id: int) -> Path:
    return Path(out_dir) / f"run-{run_id}"


@dataclass
class EpisodeContext:
    """What every episode of a run shares."""

    store: Store
    verifier_for: Callable[[str], Verifier]
    """The shared verifier for a task precision (`fp32`, `fp16`, `bf16`)."""
    backend: ModelBackend
    run_id: int
    config: AgentConfig
    out_dir: Path
    library: GuidanceLibrary
    run_config: dict[str, Any] | None = None
    """The run's whole configuration, copied into each trajectory (default: the agent config)."""
    peaks: Callable[[], DevicePeaks] | None = None
    """Returns the device's DevicePeaks (for achieved-vs-peak figures in benchmark()); None: not shown."""
    on_step: Callable[[str, EpisodeState], None] | None = None
    task_flags: Callable[[Task], list[str]] | None = None
    """Flags the task carries before the episode starts (a failed audit run with `--include-flagged`)."""


def _opening(task: Task, problem_source: str, ctx: EpisodeContext) -> list[Event]:
    device = ctx.config.device
    items = ctx.library.for_category(task.category, device, limit=ctx.config.guidance_at_start)
    events: list[Event] = [
        MessageEvent(step=0, message=Message(role="system", content=system_prompt(device))),
        MessageEvent(step=0, message=Message(role="user", content=task_prompt(task, problem_source, device,
                                                                              [i.render() for i in items]))),
    ]
    if items:
        events.append(GuidanceEvent(step=0, item_ids=[i.ref for i in items], reason=f"task category {task.category}"))
    return events


async def _fast_forward(model: ModelBackend, turns: int) -> None:
    # A replayed recording does not look at the conversation, so a resumed episode must skip the replies
    # its earlier run already consumed; live models answer the rebuilt conversation instead.
    from kernelmosaic.models.replay import ReplayModel

    if isinstance(model, ReplayModel):
        for _ in range(turns):
            await model.complete([], [])


def _origin(model: ModelBackend) -> str:
    return str(getattr(model, "origin_model", ""))


async def run_episode(task: Task, ctx: EpisodeContext) -> EpisodeInfo:
    """Run (or resume) the episode of `task` in the run; returns the finished episode's record."""
    workdir = run_dir(ctx.out_dir, ctx.run_id) / "episodes" / task.id
    problem = task.write_problem(workdir / "problem.py", "small" if ctx.config.device == "cpu" else "default")
    source = problem.read_text(encoding="utf-8")
    try:
        model = ctx.backend.for_task(task.id)
    except ModelError as exc:  # a backend that cannot serve this task ends the episode as a model error
        model, model_failure = None, exc
    header = {"tools": [t.model_dump(mode="json") for t in TOOL_SPECS], "origin_model": _origin(model) if model else ""}
    trajectory = Trajectory(task_id=task.id, task_sha256=task_sha256(task), problem_sha256=problem_hash(source),
                            model=ctx.backend.name, origin_model=header["origin_model"], tools=TOOL_SPECS,
                            config=ctx.run_config or ctx.config.model_dump(mode="json"))
    recorder = Recorder.open(ctx.store, run_id=ctx.run_id, episode_id=task.id, task_sha256=task_sha256(task),
                             problem_sha256=problem_hash(source), flags=ctx.task_flags(task) if ctx.task_flags else [],
                             header=header, opening=_opening(task, source, ctx), trajectory=trajectory,
                             path=run_dir(ctx.out_dir, ctx.run_id) / "trajectories" / f"{task.id}.json")
    state = recorder.state
    if ctx.on_step:
        recorder.on_save = lambda: ctx.on_step(task.id, state)
    recorder.save()
    if model is None:
        return finish_model_failure(recorder, model_failure)
    await _fast_forward(model, state.turns)
    try:
        toolbox = Toolbox(verifier=ctx.verifier_for(task.dtype), task=task, problem=problem, workdir=workdir,
                          state=state, library=ctx.library, config=ctx.config, peaks=ctx.peaks)
        end = await Agent(model, toolbox, recorder, ctx.config.budgets).run()
        await _final_check(toolbox, recorder, end.reason)
    except Exception as exc:
        if stop_requested():  # Ctrl-C killed its workers: nothing to record, the episode resumes
            raise Stopped("interrupted") from exc
        # The verifier or the store broke, not the model: the episode failed, and says why.
        log.exception("task %s: infrastructure error", task.id)
        return recorder.finish(INFRA_ERROR, status="failed", detail=f"{type(exc).__name__}: {exc}")
    if end.detail:
        log.info("task %s ended (%s): %s", task.id, end.reason, end.detail)
    if end.reason == "model_error" and isinstance(end.__cause__, ModelError):
        return finish_model_failure(recorder, end.__cause__)
    return recorder.finish(end.reason, detail=end.detail)


async def _final_check(toolbox: Toolbox, recorder: Recorder, reason: str) -> None:
    """An episode that ended without a successful submit() still gets its best candidate checked the way submit()
    would (full timing, sanitizer on CUDA), so a solution is not lost to a budget; a rejection demotes it."""
    best = recorder.state.best
    if best is None or (best.verification is not None and best.verification.candidate_ok):
        return
    verdict = await toolbox.final_check(best)
    recorder.final_check(best.candidate_sha256, verdict, reason, toolbox.gpu_seconds(verdict))


def finish_model_failure(recorder: Recorder, exc: ModelError) -> EpisodeInfo:
    """A server that is down or throttling says nothing about the model (the episode resumes later); a refusal no
    retry fixes (a wrong key, a missing model) is `model_unusable`; any other model failure ends the episode. The one
    classification of a model's failure, for agent and one-shot episodes alike."""
    detail = f"{exc.kind}{f' HTTP {exc.status_code}' if exc.status_code else ''}: {exc.message}"
    if exc.retryable:
        return recorder.finish(TRANSIENT, status="failed", detail=detail)
    if exc.kind in ("unavailable", "config"):
        return recorder.finish(MODEL_UNUSABLE, status="failed", detail=detail)
    return recorder.finish("model_error", detail=detail)
