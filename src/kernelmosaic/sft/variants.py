"""The three training views of one verified episode: the whole trajectory, the final answer only, and the
trajectory cut at its first timed pass (for the trajectory-vs-answer ablations).

Each view is built from recorded messages only, ids included; none invents a turn the model did not take.
"""

from __future__ import annotations

from typing import Literal

from kernelmosaic.contracts.messages import Message
from kernelmosaic.contracts.trajectory import FinalCheckEvent, ToolCallEvent, ToolResultEvent, Trajectory
from kernelmosaic.contracts.verified import passed_every_trial
from kernelmosaic.sft.conversation import ConversationError, episode_messages
from kernelmosaic.verify.verdict import Verdict

__all__ = ["Variant", "VARIANTS", "first_timed_pass_event", "variant_messages"]

Variant = Literal["full", "final_answer", "first_timed_pass"]
VARIANTS: tuple[Variant, ...] = ("full", "final_answer", "first_timed_pass")


def _timed_pass(verdict: Verdict) -> bool:
    return (passed_every_trial(verdict) and verdict.timing is not None
            and not any(f.severity == "reject" for f in verdict.findings))


def first_timed_pass_event(trajectory: Trajectory) -> int:
    """Index of the tool result whose verdict first passed a candidate with timing (either profile: benchmark()'s
    quick one counts), provided no later verdict of that candidate, the final check included, rejected it; -1 if none.

    Verified needs submit()'s final check, so a cut there would be the whole episode; this cut is where the model
    first held a working, timed kernel, and what follows it is optimization.
    """
    verdicts = [(i, e.candidate_sha256, e.verdict) for i, e in enumerate(trajectory.events)
                if isinstance(e, ToolResultEvent | FinalCheckEvent) and e.verdict is not None and e.candidate_sha256]
    for n, (index, sha, verdict) in enumerate(verdicts):
        if isinstance(trajectory.events[index], ToolResultEvent) and _timed_pass(verdict) \
                and all(later.accepted for _, s, later in verdicts[n + 1:] if s == sha):
            return index
    return -1


def _cut_at_first_timed_pass(trajectory: Trajectory, full: list[Message]) -> list[Message]:
    index = first_timed_pass_event(trajectory)
    if index < 0:  # only the harness's final check, after the last turn, passed it: nothing to cut
        return full
    end = len(episode_messages(trajectory.model_copy(update={"events": trajectory.events[: index + 1]})))
    while end < len(full) and full[end].role == "tool":  # the rest of that turn's calls keep their answers
        end += 1
    return full[:end]


def _final_answer(trajectory: Trajectory, full: list[Message]) -> list[Message]:
    best = trajectory.best
    if best is None:
        raise ConversationError(f"episode of {trajectory.task_id}: no best solution")
    calls = {e.call.id: e.call for e in trajectory.events if isinstance(e, ToolCallEvent)}
    results = [e for e in trajectory.events if isinstance(e, ToolResultEvent) and e.call_id in calls]
    wrote = next((e for e in results if e.name == "write_candidate" and e.candidate_sha256 == best.candidate_sha256), None)
    if wrote is None:
        raise ConversationError(f"episode of {trajectory.task_id}: no recorded write_candidate of its best solution")
    opening = []
    for m in full:
        if m.role == "assistant":
            break
        opening.append(m)
    picked = [wrote] + [e for e in results if e.name == "submit"][-1:]
    answer = []
    for result in picked:
        answer.append(Message(role="assistant", tool_calls=[calls[result.call_id]]))
        answer.append(Message(role="tool", content=result.content, tool_call_id=result.call_id, name=result.name))
    return opening + answer


def variant_messages(trajectory: Trajectory, variant: Variant) -> list[Message]:
    """The messages of one view.

    `full`: every message. `first_timed_pass`: up to the tool messages of the turn whose verdict first passed a
    candidate with timing (`first_timed_pass_event`), or every message when only the harness's final check did.
    `final_answer`: the opening (system, task), then the recorded
    `write_candidate` call of the best solution with its tool message, then the recorded `submit` call and its
    message when the episode submitted; the content and reasoning of those assistant turns are left out, as they
    refer to the steps that were cut.
    """
    full = episode_messages(trajectory)
    if variant == "full":
        return full
    if variant == "first_timed_pass":
        return _cut_at_first_timed_pass(trajectory, full)
    if variant == "final_answer":
        return _final_answer(trajectory, full)
    raise ValueError(f"unknown variant {variant!r} (known: {', '.join(VARIANTS)})")
