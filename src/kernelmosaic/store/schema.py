"""The store's tables (SQLAlchemy 2.x ORM): runs, episodes, events, candidates, verdicts, solutions.

One schema serves SQLite and PostgreSQL; JSON columns become JSONB on PostgreSQL.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, Boolean, DateTime, Float, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

__all__ = [
    "SCHEMA_VERSION",
    "Base",
    "MetaRow",
    "RunRow",
    "EpisodeRow",
    "EventRow",
    "CandidateRow",
    "VerdictRow",
    "SolutionRow",
    "ReviewEventRow",
    "utcnow",
]

SCHEMA_VERSION = 2
"""Bumped whenever a table changes shape; recorded in `meta` so an old program refuses a newer file
(`store/migrate.py` brings older files forward)."""

_Json = JSON().with_variant(JSONB(), "postgresql")


def utcnow() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    type_annotation_map = {dict[str, Any]: _Json, datetime: DateTime(timezone=True)}


class MetaRow(Base):
    __tablename__ = "meta"
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


class RunRow(Base):
    __tablename__ = "runs"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(200), index=True)
    created: Mapped[datetime] = mapped_column(default=utcnow)
    finished: Mapped[datetime | None] = mapped_column(default=None)
    config: Mapped[dict[str, Any]] = mapped_column(default=dict)
    model: Mapped[str] = mapped_column(Text, default="")
    task_source: Mapped[str] = mapped_column(Text, default="")
    status: Mapped[str] = mapped_column(String(16), default="running")


class EpisodeRow(Base):
    __tablename__ = "episodes"
    __table_args__ = (UniqueConstraint("run_id", "task_id", name="uq_episode_run_task"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id"), index=True)
    task_id: Mapped[str] = mapped_column(String(300))
    task_sha256: Mapped[str] = mapped_column(String(64), default="")
    problem_sha256: Mapped[str] = mapped_column(String(64), default="")
    status: Mapped[str] = mapped_column(String(16), default="running")
    exit_reason: Mapped[str] = mapped_column(String(64), default="")
    exit_detail: Mapped[str] = mapped_column(Text, default="")
    """Why it ended, for people: the HTTP status and message of a model failure, an exception, a budget."""
    # use_alter: episodes and candidates point at each other.
    best_candidate_id: Mapped[int | None] = mapped_column(
        ForeignKey("candidates.id", use_alter=True, name="fk_episode_best_candidate"), default=None
    )
    totals: Mapped[dict[str, Any] | None] = mapped_column(default=None)
    """Null until the agent checkpoints or finishes; readers then derive totals from the events."""
    task_flags: Mapped[list[str]] = mapped_column(_Json, default=list)
    """`task-*` rules seen on the episode's verdicts, and `task-audit-failed` when it ran on a failed audit."""
    header: Mapped[dict[str, Any]] = mapped_column(default=dict)
    """Trajectory header fields the events do not hold: the tool schemas offered, a replay's origin model."""
    started: Mapped[datetime] = mapped_column(default=utcnow)
    finished: Mapped[datetime | None] = mapped_column(default=None)


class EventRow(Base):
    __tablename__ = "events"
    # The unique key is what makes a replayed append idempotent instead of a duplicate.
    __table_args__ = (UniqueConstraint("episode_id", "seq", name="uq_event_episode_seq"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    episode_id: Mapped[int] = mapped_column(ForeignKey("episodes.id"))
    seq: Mapped[int] = mapped_column(Integer)
    step: Mapped[int] = mapped_column(Integer)
    type: Mapped[str] = mapped_column(String(32))
    payload: Mapped[dict[str, Any]] = mapped_column()
    created: Mapped[datetime] = mapped_column(default=utcnow)


class CandidateRow(Base):
    __tablename__ = "candidates"
    __table_args__ = (UniqueConstraint("episode_id", "sha256", name="uq_candidate_episode_sha"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    episode_id: Mapped[int] = mapped_column(ForeignKey("episodes.id"), index=True)
    sha256: Mapped[str] = mapped_column(String(64))
    source: Mapped[str] = mapped_column(Text)
    created: Mapped[datetime] = mapped_column(default=utcnow)


class VerdictRow(Base):
    __tablename__ = "verdicts"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    candidate_id: Mapped[int] = mapped_column(ForeignKey("candidates.id"), index=True)
    status: Mapped[str] = mapped_column(String(32))
    accepted: Mapped[bool] = mapped_column(Boolean)
    speedup_vs_eager: Mapped[float | None] = mapped_column(Float, default=None)
    speedup_vs_compile: Mapped[float | None] = mapped_column(Float, default=None)
    full: Mapped[dict[str, Any]] = mapped_column()
    """The whole `kernelmosaic.verdict/1` object."""
    created: Mapped[datetime] = mapped_column(default=utcnow)


class SolutionRow(Base):
    """A candidate that passes `contracts.verified.check_candidate` on its own record (latest verdict accepted,
    timed, sanitized on CUDA). `verified` is false when its task is flagged: such rows are kept, marked, and
    never counted. A later rejection deletes the row (its verdicts stay)."""

    __tablename__ = "solutions"
    __table_args__ = (UniqueConstraint("episode_id", "candidate_id", name="uq_solution_episode_candidate"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    episode_id: Mapped[int] = mapped_column(ForeignKey("episodes.id"), index=True)
    candidate_id: Mapped[int] = mapped_column(ForeignKey("candidates.id"))
    verdict_id: Mapped[int] = mapped_column(ForeignKey("verdicts.id"))
    """Its latest verdict."""
    step: Mapped[int] = mapped_column(Integer, default=0)
    verdict_ids: Mapped[list[int]] = mapped_column(_Json, default=list)
    """The accepted verdicts (ids) it rests on: every one since its last rejection."""
    timed: Mapped[bool] = mapped_column(Boolean, default=False)
    sanitized: Mapped[bool] = mapped_column(Boolean, default=False)
    verified: Mapped[bool] = mapped_column(Boolean, default=False)
    """Counted as solved: also its task carries no flag."""
    task_flags: Mapped[list[str]] = mapped_column(_Json, default=list)
    created: Mapped[datetime] = mapped_column(default=utcnow)


class ReviewEventRow(Base):
    """One entry of the human review's audit log: a decision or an edit. Rows are only ever inserted, with the
    store's id and the database's clock (`store/review_guards.py` installs the triggers that enforce it)."""

    __tablename__ = "review_events"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    task_id: Mapped[str] = mapped_column(String(300), index=True)
    reference_sha256: Mapped[str] = mapped_column(String(64), default="")
    kind: Mapped[str] = mapped_column(String(16))
    """`decision` or `edit`."""
    decision: Mapped[str] = mapped_column(String(16), default="")
    """`accept`, `reject` or `needs-edit` for a decision; empty for an edit."""
    reason: Mapped[str] = mapped_column(Text, default="")
    changes: Mapped[dict[str, Any]] = mapped_column(default=dict)
    """For an edit: field -> {"old": ..., "new": ...}."""
    reviewer: Mapped[str] = mapped_column(String(200))
    created: Mapped[datetime] = mapped_column()
    """Set by the database at insert (UTC), never by the writer."""
