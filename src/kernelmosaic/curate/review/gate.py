"""The review gate in front of `generate`: once any of the given tasks has a review decision, only the
accepted ones go through; with no decision at all, every task does (and the gate says so). Behind the run,
`review_exclusions` is what `sft export` and `evaluate`'s report honour: tasks whose latest decision, whenever it
was taken, turned them away.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from kernelmosaic.curate.review.state import edited_task, review_states
from kernelmosaic.store.reviews import ReviewLog, read_events
from kernelmosaic.store.store import Store
from kernelmosaic.tasks.schema import Task

__all__ = ["ReviewGate", "ReviewExclusion", "accepted_task_ids", "apply_review", "review_exclusions"]


class ReviewGate(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    reviewed: bool
    """True when at least one of the given tasks has a recorded decision: the gate is then closed to the rest."""
    task_ids: list[str]
    """The ids asked about, in the caller's order."""
    accepted: list[str] = Field(default_factory=list)
    """Ids whose latest decision is accept and still holds (no later edit, same reference), in the caller's order."""
    pending: list[str] = Field(default_factory=list)
    """Ids without a decision, or whose decision was reopened by a later edit or a changed reference."""
    rejected: list[str] = Field(default_factory=list)
    needs_edit: list[str] = Field(default_factory=list)

    @property
    def allowed(self) -> list[str]:
        """The ids `generate` may run: the accepted ones once a review exists, otherwise all of them."""
        return self.accepted if self.reviewed else list(self.task_ids)

    @property
    def message(self) -> str:
        """One sentence for the person running `generate`."""
        if not self.reviewed:
            return f"no review recorded for these {len(self.task_ids)} tasks: running all of them"
        return (f"review gate: running the {len(self.accepted)} accepted of {len(self.task_ids)} tasks "
                f"({len(self.pending)} pending, {len(self.needs_edit)} need edits, {len(self.rejected)} rejected)")


def accepted_task_ids(store: Store, task_ids: Sequence[str],
                      reference_hashes: Mapping[str, str] | None = None) -> ReviewGate:
    """Which of `task_ids` the review accepted. With `reference_hashes` (id -> `Task.hashes.reference`), a
    decision taken on another version of the reference no longer counts."""
    hashes = {task_id: (reference_hashes or {}).get(task_id, "") for task_id in task_ids}
    states = review_states(ReviewLog(store).events(list(hashes)), hashes)
    by_status: dict[str, list[str]] = {"accepted": [], "pending": [], "rejected": [], "needs-edit": []}
    for task_id in dict.fromkeys(task_ids):
        by_status[states[task_id].status].append(task_id)
    return ReviewGate(reviewed=any(s.decision is not None for s in states.values()), task_ids=list(task_ids),
                      accepted=by_status["accepted"], pending=by_status["pending"], rejected=by_status["rejected"],
                      needs_edit=by_status["needs-edit"])


def apply_review(store: Store, tasks: Sequence[Task]) -> tuple[list[Task], ReviewGate]:
    """The tasks `generate` should run, with reviewers' edits of `nl` and `tags` applied, and the gate."""
    hashes = {t.id: t.hashes.reference for t in tasks}
    states = review_states(ReviewLog(store).events(list(hashes)), hashes)
    gate = accepted_task_ids(store, [t.id for t in tasks], hashes)
    allowed = set(gate.allowed)
    return [edited_task(t, states[t.id]) for t in tasks if t.id in allowed], gate


class ReviewExclusion(BaseModel):
    """A task the review turned away: its latest decision is `reject` or `needs-edit`."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    task_id: str
    decision: Literal["reject", "needs-edit"]
    reviewer: str
    reason: str
    event_id: int
    """The decision's entry in the review log (`kernelmosaic review log`)."""
    created: datetime

    @property
    def why(self) -> str:
        """One line for a report: the decision, who took it, when (UTC) and the reason."""
        return (f"review: {self.decision} by {self.reviewer} at {self.created:%Y-%m-%d %H:%M} UTC "
                f"(log entry {self.event_id}): {self.reason}")


def review_exclusions(store: Store, task_ids: Sequence[str] | None = None) -> dict[str, ReviewExclusion]:
    """Tasks (of `task_ids`, all when None) whose latest review decision is `reject` or `needs-edit`.

    The latest decision holds whenever it was taken, before or after a run: an edit or a changed reference does
    not lift it (a run used the task as it was); only a later `accept` does. Reads only."""
    latest: dict[str, ReviewExclusion | None] = {}
    for event in read_events(store, task_ids):
        if event.kind != "decision":
            continue
        if event.decision in ("reject", "needs-edit"):
            latest[event.task_id] = ReviewExclusion(task_id=event.task_id, decision=event.decision,
                                                    reviewer=event.reviewer, reason=event.reason,
                                                    event_id=event.id, created=event.created)
        else:
            latest[event.task_id] = None
    return {task_id: why for task_id, why in latest.items() if why is not None}
