"""The three training views of one verified episode: the whole trajectory, the final answer only, and the
trajectory cut where its first verified solution appeared (for the trajectory-vs-answer ablations).

Each view is built from recorded messages only, ids included; none invents a turn the model did not take.
"""

from __future__ import annotations

from typing import Literal

from kernelmosaic.contracts.messages import Message
from kernelmosaic.contracts.trajectory import ToolCallEvent, ToolResultEvent, Trajectory
from kernelmosaic.contracts.verified import check_candidate
from kernelmosaic.sft.conversation import ConversationError, episode_messages
from kernelmosaic.verify.verdict import Verdict

__all__ = ["Variant", "VARIANTS", "first_verified_event", "variant_messages"]

Variant = Literal["full", "final_answer", "first_verified"]
VARIANTS: tuple[Variant, ...] = ("full", "final_answer", "first_verified")


def first_verified_event(trajectory: Trajectory, task_flags: list[str] | None = None) -> int:
    """Index of the event whose verdict first made some candidate verified (`contracts.verified`); -1 if none did."""
    history: dict[str, list[Verdict]] = {}
    for i, event in enumerate(trajectory.events):
        if isinstance(event, ToolResultEvent) and event.verdict is not None and event.candidate_sha256:
            verdicts = history.setdefault(event.candidate_sha256, [])
            verdicts.append(event.verdict)
            if check_candidate(verdicts, task_flags or []).verified:
                return i
    return -1


def _cut_at_first_verified(trajectory: Trajectory, full: list[Message]) -> list[Message]:
    index = first_verified_event(trajectory)
    if index < 0:
        raise ConversationError(f"episode of {trajectory.task_id}: no verdict in its events verifies a candidate")
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

    `full`: every message. `first_verified`: up to the tool messages of the turn whose verdict first verified a
    candidate. `final_answer`: the opening (system, task), then the recorded `write_candidate` call of the best
    solution with its tool message, then the recorded `submit` call and its message when the episode submitted;
    the content and reasoning of those assistant turns are left out, as they refer to the steps that were cut.
    """
    full = episode_messages(trajectory)
    if variant == "full":
        return full
    if variant == "first_verified":
        return _cut_at_first_verified(trajectory, full)
    if variant == "final_answer":
        return _final_answer(trajectory, full)
    raise ValueError(f"unknown variant {variant!r} (known: {', '.join(VARIANTS)})")
