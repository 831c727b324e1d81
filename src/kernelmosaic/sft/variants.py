"""The three training views of one verified episode: the whole trajectory, the final answer only, and the
trajectory cut at its first timed pass of a verified kernel (for the trajectory-vs-answer ablations).

Each view is built from recorded messages only, ids included; none invents a turn the model did not take. A view
that cannot end on a verified kernel is not made (`NoVerifiedCut`): the export leaves the episode out of it.
"""

from __future__ import annotations

from typing import Literal

from kernelmosaic.contracts.messages import Message
from kernelmosaic.contracts.trajectory import FinalCheckEvent, ToolCallEvent, ToolResultEvent, Trajectory
from kernelmosaic.contracts.verdict import Verdict
from kernelmosaic.contracts.verified import check_candidate, passed_every_trial
from kernelmosaic.sft.conversation import ConversationError, episode_messages

__all__ = ["Variant", "VARIANTS", "NoVerifiedCut", "first_timed_pass_event", "variant_messages"]

Variant = Literal["full", "final_answer", "first_timed_pass"]
VARIANTS: tuple[Variant, ...] = ("full", "final_answer", "first_timed_pass")


def _timed_pass(verdict: Verdict) -> bool:
    return (passed_every_trial(verdict) and verdict.timing is not None
            and not any(f.severity == "reject" for f in verdict.findings))


class NoVerifiedCut(ConversationError):
    """The episode has no tool result whose kernel is verified: its `first_timed_pass` view would end on a kernel
    that is not, so the view leaves the episode out."""


def first_timed_pass_event(trajectory: Trajectory) -> int:
    """Index of the first tool result whose verdict passed a candidate with timing (either profile: benchmark()'s
    quick one counts) where that candidate is verified by the one definition (`contracts.verified.check_candidate`
    over every verdict it received in the episode, the final check included) and the verification rests on this
    verdict (no rejection of it came after); -1 if none.

    Verified needs submit()'s full timing (and compute-sanitizer on CUDA), so the first verified verdict is near
    the end of the episode; this cut is where the model first held a kernel that was then verified as it stood,
    and what follows it is optimization.
    """
    flags = trajectory.best.verification.task_flags if trajectory.best and trajectory.best.verification else []
    verdicts = [(i, e.candidate_sha256, e.verdict) for i, e in enumerate(trajectory.events)
                if isinstance(e, ToolResultEvent | FinalCheckEvent) and e.verdict is not None and e.candidate_sha256]
    histories: dict[str, list[tuple[int, Verdict]]] = {}
    for index, sha, verdict in verdicts:
        histories.setdefault(sha, []).append((index, verdict))
    rests_on: dict[str, set[int]] = {}
    for sha, history in histories.items():
        verification = check_candidate([v for _, v in history], flags)
        rests_on[sha] = {history[n][0] for n in verification.rests_on} if verification.verified else set()
    for index, sha, verdict in verdicts:
        if isinstance(trajectory.events[index], ToolResultEvent) and _timed_pass(verdict) and index in rests_on[sha]:
            return index
    return -1


def _cut_at_first_timed_pass(trajectory: Trajectory, full: list[Message]) -> list[Message]:
    index = first_timed_pass_event(trajectory)
    if index < 0:
        raise NoVerifiedCut(f"episode of {trajectory.task_id}: no tool result holds a verified kernel (only the "
                            "harness's final check, or none, verified one): left out of first_timed_pass")
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

    `full`: every message. `first_timed_pass`: up to the tool messages of the turn whose verdict first passed,
    with timing, a candidate that is verified (`first_timed_pass_event`); `NoVerifiedCut` when no tool result did.
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
