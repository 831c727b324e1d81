"""The one-shot episode: the model is asked once, with one tool (write_candidate); the harness then judges that write.

The verdict is the write's tool result, so the recorded conversation is exactly what the model saw. A crash after
the model answered resumes at the judgement; the model is not asked again.
"""

from __future__ import annotations

import asyncio
import logging

from kernelmosaic.agent.episode import EpisodeContext, finish_model_failure, run_dir, task_sha256
from kernelmosaic.agent.prompts import system_prompt, task_prompt
from kernelmosaic.contracts.episode_state import EpisodeState
from kernelmosaic.contracts.hashing import problem_hash
from kernelmosaic.contracts.messages import Message, ToolCall
from kernelmosaic.contracts.tool_output import ToolOutput
from kernelmosaic.contracts.tool_specs import TOOL_SPECS, argument_error
from kernelmosaic.contracts.trajectory import Event, MessageEvent, Trajectory
from kernelmosaic.models.base import ModelError
from kernelmosaic.runs.recorder import Recorder
from kernelmosaic.store.records import EpisodeInfo
from kernelmosaic.tasks.schema import Task
from kernelmosaic.verify.stopping import Stopped, stop_requested

__all__ = ["ONE_SHOT_NOTE", "WRITE_ONLY", "run_one_shot"]

log = logging.getLogger(__name__)
WRITE_ONLY = [s for s in TOOL_SPECS if s.name == "write_candidate"]
ONE_SHOT_NOTE = ("One-shot evaluation: reply with a single write_candidate(source) call holding the complete candidate. "
                 "The harness then compiles, tests and times it; there is no further turn and no other tool.")
_EXTRA = "Not run: a one-shot episode judges its first well-formed write_candidate call only."


async def _judge(call: ToolCall, task: Task, ctx: EpisodeContext, state: EpisodeState, problem, workdir) -> ToolOutput:
    source = str(call.arguments["source"])
    sha = state.set_candidate(source)
    candidate = workdir / "candidate.py"
    candidate.write_text(source, encoding="utf-8")
    verifier = ctx.verifier_for(task.dtype)
    cuda = ctx.config.device == "cuda"
    verdict = await asyncio.to_thread(verifier.verify, problem, candidate, timing=True, sanitize=cuda)
    state.consider(sha, verdict, state.turns)
    text = f"Candidate written (sha256 {sha[:12]}); the harness judged it: {verdict.status.value}: {verdict.message}"
    return ToolOutput(text, verdict=verdict, candidate_sha256=sha, source=source,
                      gpu_seconds=verdict.device_seconds if cuda else 0.0)


async def run_one_shot(task: Task, ctx: EpisodeContext) -> EpisodeInfo:
    """Run (or resume) the one-shot episode of `task`; returns the finished episode's record."""
    workdir = run_dir(ctx.out_dir, ctx.run_id) / "episodes" / task.id
    problem = task.write_problem(workdir / "problem.py", "small" if ctx.config.device == "cpu" else "default")
    source = problem.read_text(encoding="utf-8")
    header = {"tools": [t.model_dump(mode="json") for t in WRITE_ONLY], "origin_model": ""}
    opening: list[Event] = [
        MessageEvent(step=0, message=Message(role="system", content=system_prompt(ctx.config.device))),
        MessageEvent(step=0, message=Message(role="user", content=task_prompt(task, source, ctx.config.device, [])
                                             + "\n\n" + ONE_SHOT_NOTE))]
    trajectory = Trajectory(task_id=task.id, task_sha256=task_sha256(task), problem_sha256=problem_hash(source),
                            model=ctx.backend.name, tools=WRITE_ONLY, config=ctx.run_config or {})
    recorder = Recorder.open(ctx.store, run_id=ctx.run_id, episode_id=task.id, task_sha256=task_sha256(task),
                             problem_sha256=problem_hash(source), flags=ctx.task_flags(task) if ctx.task_flags else [],
                             header=header, opening=opening, trajectory=trajectory,
                             path=run_dir(ctx.out_dir, ctx.run_id) / "trajectories" / f"{task.id}.json")
    state = recorder.state
    if state.turns == 0:
        try:
            reply = await ctx.backend.for_task(task.id).complete(list(state.messages), WRITE_ONLY)
        except ModelError as exc:
            return finish_model_failure(recorder, exc)
        state.turns = 1
        recorder.message(reply.message, reply.usage)
    pending, logged = state.pending_calls(), state.logged_call_ids()
    first = next((c for c in pending if c.name == "write_candidate" and not argument_error(c)), None)
    try:
        for call in pending:
            if call.id not in logged:
                recorder.call(call)
            out = await _judge(call, task, ctx, state, problem, workdir) if call is first else ToolOutput(_EXTRA)
            recorder.result(call, out)
    except Exception as exc:  # the verifier or the store broke, not the model
        if stop_requested():  # Ctrl-C killed its workers: nothing to record, the episode resumes
            raise Stopped("interrupted") from exc
        log.exception("task %s: infrastructure error", task.id)
        return recorder.finish("infra_error", status="failed", detail=f"{type(exc).__name__}: {exc}")
    if not state.current_sha:
        return recorder.finish("format_error", detail="the reply made no usable write_candidate call")
    return recorder.finish("judged")
