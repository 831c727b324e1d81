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
from kernelmosaic.agent.recorder import Recorder
from kernelmosaic.agent.state import EpisodeState
from kernelmosaic.agent.tools import Toolbox
from kernelmosaic.models.messages import Message
from kernelmosaic.store.records import EpisodeInfo
from kernelmosaic.store.trajectory import GuidanceEvent, MessageEvent, Trajectory
from kernelmosaic.verify.hashing import problem_hash

__all__ = ["EpisodeContext", "run_episode", "task_sha256", "run_dir"]

log = logging.getLogger(__name__)
_TRANSIENT = {"unavailable", "rate_limited", "timeout"}


def task_sha256(task: Any) -> str:
    """Identity of the task's content (reference, spec, statement), so a resume against an edited task is refused."""
    h = task.hashes
    return hashlib.sha256(f"{h.reference}:{h.spec}:{h.nl}".encode()).hexdigest()


def run_dir(out_dir: Path, run_id: int) -> Path:
    return Path(out_dir) / f"run-{run_id}"


@dataclass
class EpisodeContext:
    """What every episode of a run shares."""

    store: Any
    verifier_for: Callable[[str], Any]
    """The shared verifier for a task precision (`fp32`, `fp16`, `bf16`)."""
    backend: Any
    run_id: int
    config: AgentConfig
    out_dir: Path
    library: GuidanceLibrary
    run_config: dict[str, Any] | None = None
    """The run's whole configuration, copied into each trajectory (default: the agent config)."""
    peaks: Callable[[], Any] | None = None
    """Returns the device's DevicePeaks (for achieved-vs-peak figures in benchmark()); None: not shown."""
    on_step: Callable[[str, EpisodeState], None] | None = None


def _opening(task: Any, problem_source: str, ctx: EpisodeContext) -> list[Any]:
    device = ctx.config.device
    items = ctx.library.for_category(task.category, device, limit=ctx.config.guidance_at_start)
    events: list[Any] = [
        MessageEvent(step=0, message=Message(role="system", content=system_prompt(device))),
        MessageEvent(step=0, message=Message(role="user", content=task_prompt(task, problem_source, device,
                                                                              [i.render() for i in items]))),
    ]
    if items:
        events.append(GuidanceEvent(step=0, item_ids=[i.ref for i in items], reason=f"task category {task.category}"))
    return events


async def _fast_forward(model: Any, turns: int) -> None:
    # A replayed recording does not look at the conversation, so a resumed episode must skip the replies
    # its earlier run already consumed; live models answer the rebuilt conversation instead.
    from kernelmosaic.models.replay import ReplayModel

    if isinstance(model, ReplayModel):
        for _ in range(turns):
            await model.complete([], [])


async def run_episode(task: Any, ctx: EpisodeContext) -> EpisodeInfo:
    """Run (or resume) the episode of `task` in the run; returns the finished episode's record."""
    workdir = run_dir(ctx.out_dir, ctx.run_id) / "episodes" / task.id
    problem = task.write_problem(workdir / "problem.py", "small" if ctx.config.device == "cpu" else "default")
    source = problem.read_text(encoding="utf-8")
    episode = ctx.store.start_episode(ctx.run_id, task.id, task_sha256(task), problem_hash(source))
    events = list(episode.events)
    opening = _opening(task, source, ctx)
    for seq in range(len(events), len(opening)):  # new episode, or one that crashed while opening
        ctx.store.append_event(episode.id, seq, opening[seq])
        events.append(opening[seq])
    state = EpisodeState.from_events(events, wall_seconds=episode.totals.wall_seconds)
    header = Trajectory(task_id=task.id, task_sha256=task_sha256(task), problem_sha256=problem_hash(source),
                        model=ctx.backend.name, config=ctx.run_config or ctx.config.model_dump(mode="json"))
    recorder = Recorder(ctx.store, episode.id, state, header, run_dir(ctx.out_dir, ctx.run_id) / "trajectories" / f"{task.id}.json")
    if ctx.on_step:
        recorder.on_save = lambda: ctx.on_step(task.id, state)
    recorder.save()
    try:
        model = ctx.backend.for_task(task.id)
        await _fast_forward(model, state.turns)
    except Exception as exc:  # noqa: BLE001 - a backend that cannot serve this task ends the episode as a model error
        log.warning("task %s: model backend unavailable: %s", task.id, exc)
        return recorder.finish("model_error")
    try:
        toolbox = Toolbox(verifier=ctx.verifier_for(task.dtype), task=task, problem=problem, workdir=workdir,
                          state=state, library=ctx.library, config=ctx.config, peaks=ctx.peaks)
        end = await Agent(model, toolbox, recorder, ctx.config.budgets).run()
    except Exception:
        # The verifier or the store broke, not the model: mark the episode failed so a resume retries it.
        log.exception("task %s: infrastructure error; the episode is marked failed and will be retried on resume", task.id)
        return recorder.finish("infra_error", status="failed")
    if end.detail:
        log.info("task %s ended (%s): %s", task.id, end.reason, end.detail)
    # A server that is down or throttling says nothing about the model: such episodes resume later.
    transient = end.reason == "model_error" and getattr(end.__cause__, "kind", "") in _TRANSIENT
    return recorder.finish(end.reason, status="failed" if transient else "done")
