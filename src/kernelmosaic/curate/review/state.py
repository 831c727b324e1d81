"""Where each task stands in the review, derived from the append-only log (the log is the only truth).

A task's status is its latest decision, unless it was edited after that decision or its reference changed
since (then it is back to `pending`: what was judged is not what is there now).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from kernelmosaic.store.reviews import ReviewEvent
from kernelmosaic.tasks.schema import Review, Task

__all__ = ["Status", "STATUSES", "TaskReview", "review_states", "edited_task"]

Status = Literal["pending", "accepted", "rejected", "needs-edit"]
STATUSES: tuple[Status, ...] = ("pending", "needs-edit", "accepted", "rejected")
_STATUS_OF = {"accept": "accepted", "reject": "rejected", "needs-edit": "needs-edit"}


class TaskReview(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    task_id: str
    status: Status = "pending"
    decision: ReviewEvent | None = None
    """The latest decision, whether or not it still holds."""
    reopened: str = ""
    """Why a task with a decision is pending again (edited after it, or its reference changed); empty otherwise."""
    fields: dict[str, Any] = Field(default_factory=dict)
    """Latest edited value per field (`nl`, `tags`); a field never edited is absent."""
    events: list[ReviewEvent] = Field(default_factory=list)


def review_states(events: Iterable[ReviewEvent], reference_hashes: Mapping[str, str]) -> dict[str, TaskReview]:
    """The review of every task in `reference_hashes` (task id -> current reference sha256; "" skips the check)."""
    states = {task_id: TaskReview(task_id=task_id) for task_id in reference_hashes}
    for event in sorted(events, key=lambda e: e.id):
        state = states.get(event.task_id)
        if state is None:
            continue
        state.events.append(event)
        if event.kind == "decision":
            state.decision, state.reopened = event, ""
        else:
            state.fields.update({name: change.new for name, change in event.changes.items()})
            if state.decision is not None:
                state.reopened = f"edited by {event.reviewer} after the decision"
    for task_id, state in states.items():
        current = reference_hashes[task_id]
        if state.decision is not None and not state.reopened and current and state.decision.reference_sha256 \
                and state.decision.reference_sha256 != current:
            state.reopened = "the reference changed after the decision"
        if state.decision is not None and not state.reopened:
            state.status = _STATUS_OF[state.decision.decision or ""]
    return states


def edited_task(task: Task, review: TaskReview) -> Task:
    """`task` with the review's edits of `nl` and `tags` applied and its `review` field filled in."""
    update: dict[str, Any] = {}
    if "nl" in review.fields:
        update["forms"] = task.forms.model_copy(update={"nl": review.fields["nl"]})
    if "tags" in review.fields:
        update["tags"] = list(review.fields["tags"])
    if review.decision is not None and review.status in ("accepted", "rejected"):
        update["review"] = Review(state="approved" if review.status == "accepted" else "rejected",
                                  reviewer=review.decision.reviewer, notes=review.decision.reason)
    return task.model_copy(update=update) if update else task
