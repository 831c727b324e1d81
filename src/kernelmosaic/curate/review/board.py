"""The served task set and its review: a queue per status, the tasks as edited, decisions and edits.

State is re-read from the store's log on every call, so two servers (or a server and `review export`) on
one database never disagree for long and nothing is cached that could drift from the record.
"""

from __future__ import annotations

from collections.abc import Sequence

from kernelmosaic.curate.review.checks import TaskChecks
from kernelmosaic.curate.review.state import STATUSES, TaskReview, edited_task, review_states
from kernelmosaic.store.reviews import FieldChange, ReviewEvent, ReviewLog
from kernelmosaic.tasks.schema import Task

__all__ = ["FILTERS", "ReviewBoard"]

FILTERS = ("pending", "needs-edit", "accepted", "rejected", "all")


class ReviewBoard:
    def __init__(self, tasks: Sequence[Task], log: ReviewLog, checks: dict[str, TaskChecks]) -> None:
        self.tasks = {t.id: t for t in sorted(tasks, key=lambda t: t.id)}
        if len(self.tasks) != len(tasks):
            raise ValueError("task ids must be unique to review them")
        self.log = log
        self.checks = checks

    def states(self) -> dict[str, TaskReview]:
        hashes = {task_id: t.hashes.reference for task_id, t in self.tasks.items()}
        return review_states(self.log.events(), hashes)

    def counts(self, states: dict[str, TaskReview]) -> dict[str, int]:
        counts = {s: 0 for s in STATUSES}
        for state in states.values():
            counts[state.status] += 1
        return {**counts, "all": len(states)}

    def queue(self, states: dict[str, TaskReview], which: str) -> list[str]:
        return [task_id for task_id, s in states.items() if which == "all" or s.status == which]

    def neighbours(self, states: dict[str, TaskReview], which: str, task_id: str) -> tuple[str | None, str | None]:
        """(previous, next) task in the queue around `task_id`, by id order, whether or not it is in the queue."""
        queue = self.queue(states, which)
        before = [t for t in queue if t < task_id]
        after = [t for t in queue if t > task_id]
        return (before[-1] if before else None), (after[0] if after else (queue[0] if queue and queue[0] != task_id
                                                                          else None))

    def task(self, task_id: str, states: dict[str, TaskReview]) -> Task:
        return edited_task(self.tasks[task_id], states[task_id])

    def decide(self, task_id: str, decision: str, reviewer: str, reason: str) -> ReviewEvent:
        return self.log.record_decision(task_id, decision, reviewer, reason, self.tasks[task_id].hashes.reference)

    def edit(self, task_id: str, nl: str, tags: list[str], reviewer: str) -> ReviewEvent | None:
        """Record the fields that differ from the task as it now reads; None when nothing changed."""
        current = self.task(task_id, self.states())
        changes = {}
        if nl.strip() and nl.strip() != current.forms.nl.strip():
            changes["nl"] = FieldChange(old=current.forms.nl, new=nl.strip() + "\n")
        if tags != current.tags:
            changes["tags"] = FieldChange(old=current.tags, new=tags)
        if not changes:
            return None
        return self.log.record_edit(task_id, changes, reviewer, self.tasks[task_id].hashes.reference)
