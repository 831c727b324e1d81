"""The human review's audit log in the store: decisions (accept / reject / needs-edit) and edits of tasks.

Append-only by construction: this API only inserts, with no id and no time of its own, and triggers installed on
first use (`store/review_guards.py`) make the database itself refuse UPDATE and DELETE, ids out of order or chosen
by the writer, and times that are not the database's clock, so a decision once recorded stays on the record
where it was written.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import select
from sqlalchemy.orm import Session

from kernelmosaic.store.errors import StoreError
from kernelmosaic.store.review_guards import install_review_guards, lock_for_append, store_clock
from kernelmosaic.store.schema import ReviewEventRow
from kernelmosaic.store.store import Store

__all__ = ["Decision", "DECISIONS", "FieldChange", "ReviewEvent", "ReviewLog", "read_events"]

Decision = Literal["accept", "reject", "needs-edit"]
DECISIONS: tuple[Decision, ...] = ("accept", "reject", "needs-edit")

class FieldChange(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    old: Any
    """Value before the edit (a string for `nl`, a list of strings for `tags`)."""
    new: Any
    """Value after the edit."""


class ReviewEvent(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    id: int
    """Position in the log (database id, increasing)."""
    task_id: str
    reference_sha256: str = ""
    """The task's reference hash when the event was recorded; a later, different hash makes a decision stale."""
    kind: Literal["decision", "edit"]
    decision: Decision | None = None
    """Set for decisions; None for edits."""
    reason: str = ""
    changes: dict[str, FieldChange] = Field(default_factory=dict)
    """Set for edits: which fields changed, from what to what."""
    reviewer: str
    created: datetime


def _event(row: ReviewEventRow) -> ReviewEvent:
    return ReviewEvent(id=row.id, task_id=row.task_id, reference_sha256=row.reference_sha256, kind=row.kind,
                       decision=row.decision or None, reason=row.reason, reviewer=row.reviewer,
                       changes={k: FieldChange(**v) for k, v in (row.changes or {}).items()}, created=row.created)


class ReviewLog:
    """Review decisions and edits, appended to a `Store`'s database; one transaction per call."""

    def __init__(self, store: Store) -> None:
        self.store = store
        store._write(install_review_guards)

    def _append(self, row: ReviewEventRow) -> ReviewEvent:
        """Insert `row` with the store's id and the database's clock (whatever the row held is not sent)."""
        def append(session: Session) -> ReviewEvent:
            lock_for_append(session)
            row.created = store_clock(session)  # type: ignore[assignment]
            session.add(row)
            session.flush()
            return _event(row)

        return self.store._write(append)

    def record_decision(self, task_id: str, decision: str, reviewer: str, reason: str = "",
                        reference_sha256: str = "") -> ReviewEvent:
        """Append a decision; reject and needs-edit need a reason, every decision needs a reviewer."""
        if decision not in DECISIONS:
            raise StoreError(f"review of {task_id!r}: unknown decision {decision!r} (one of {', '.join(DECISIONS)})")
        _check_reviewer(task_id, reviewer)
        if decision != "accept" and not reason.strip():
            raise StoreError(f"review of {task_id!r}: a {decision} decision needs a reason")
        return self._append(ReviewEventRow(task_id=task_id, kind="decision", decision=decision, reason=reason.strip(),
                                           reviewer=reviewer.strip(), reference_sha256=reference_sha256))

    def record_edit(self, task_id: str, changes: dict[str, FieldChange], reviewer: str,
                    reference_sha256: str = "") -> ReviewEvent:
        """Append an edit of a task's fields (only those that changed are given)."""
        _check_reviewer(task_id, reviewer)
        if not changes:
            raise StoreError(f"edit of {task_id!r}: nothing changed")
        data = {k: v.model_dump(mode="json") for k, v in changes.items()}
        return self._append(ReviewEventRow(task_id=task_id, kind="edit", changes=data, reviewer=reviewer.strip(),
                                           reference_sha256=reference_sha256))

    def events(self, task_ids: Sequence[str] | None = None) -> list[ReviewEvent]:
        """The log in the order it was written, for the given tasks (all when None)."""
        return read_events(self.store, task_ids)


def read_events(store: Store, task_ids: Sequence[str] | None = None) -> list[ReviewEvent]:
    """`ReviewLog.events` for readers that write nothing (no triggers installed): reports and exports."""
    query = select(ReviewEventRow).order_by(ReviewEventRow.id)
    wanted = None if task_ids is None else set(task_ids)
    if wanted is not None and len(wanted) <= 500:  # beyond that, filtering here beats a huge IN list
        query = query.where(ReviewEventRow.task_id.in_(sorted(wanted)))
    rows = store._read(lambda s: [_event(r) for r in s.scalars(query)])
    return rows if wanted is None else [e for e in rows if e.task_id in wanted]


def _check_reviewer(task_id: str, reviewer: str) -> None:
    if not reviewer.strip():
        raise StoreError(f"review of {task_id!r}: the reviewer's name is required")
