"""Runs, episodes and their events, as operations on one open SQLAlchemy session.

The `Store` wraps each call in its own transaction; these functions never commit.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from kernelmosaic.contracts.trajectory import (
    Event,
    FinalCheckEvent,
    GuidanceEvent,
    MessageEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from kernelmosaic.scrub import scrub_json
from kernelmosaic.store.errors import EventConflictError, NotFoundError, StoreError
from kernelmosaic.store.schema import EpisodeRow, EventRow, RunRow, utcnow

__all__ = [
    "check_json_clean",
    "get_run_row",
    "get_episode_row",
    "open_episode",
    "append_event",
    "load_events",
    "next_seq",
    "finish_episode_row",
]

_EVENT_TYPES = (MessageEvent, ToolCallEvent, ToolResultEvent, GuidanceEvent, FinalCheckEvent)
_EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)


def check_json_clean(value: Any, where: str) -> None:
    """Refuse NaN and infinity: they are not JSON, and PostgreSQL would reject them anyway."""
    if isinstance(value, float) and not math.isfinite(value):
        raise StoreError(f"{where}: {value!r} is not JSON-clean (results must never hold NaN or infinity)")
    if isinstance(value, dict):
        for key, item in value.items():
            check_json_clean(item, f"{where}.{key}")
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            check_json_clean(item, f"{where}[{index}]")


def get_run_row(session: Session, run_id: int) -> RunRow:
    row = session.get(RunRow, run_id)
    if row is None:
        raise NotFoundError(f"no run with id {run_id}")
    return row


def get_episode_row(session: Session, episode_id: int) -> EpisodeRow:
    row = session.get(EpisodeRow, episode_id)
    if row is None:
        raise NotFoundError(f"no episode with id {episode_id}")
    return row


def open_episode(session: Session, run_id: int, task_id: str, task_sha256: str, problem_sha256: str) -> EpisodeRow:
    """The episode of `task_id` in the run, created if new, reopened (status `running`) unless done."""
    get_run_row(session, run_id)
    row = session.scalars(select(EpisodeRow).where(EpisodeRow.run_id == run_id, EpisodeRow.task_id == task_id)).first()
    if row is None:
        row = EpisodeRow(run_id=run_id, task_id=task_id, task_sha256=task_sha256, problem_sha256=problem_sha256)
        session.add(row)
        session.flush()
        return row
    if task_sha256 and row.task_sha256 and task_sha256 != row.task_sha256:
        # Resuming on a changed task would splice two different problems into one trajectory.
        raise StoreError(
            f"run {run_id}, task {task_id!r}: the task changed since episode {row.id} started "
            f"(sha256 {row.task_sha256[:12]} -> {task_sha256[:12]}); start a new run"
        )
    if row.status != "done":
        row.status, row.finished, row.exit_reason, row.exit_detail = "running", None, "", ""
        row.problem_sha256 = problem_sha256 or row.problem_sha256
    return row


def next_seq(session: Session, episode_id: int) -> int:
    last = session.scalar(select(func.max(EventRow.seq)).where(EventRow.episode_id == episode_id))
    return 0 if last is None else last + 1


def _event_payload(event: Event | dict[str, Any], where: str) -> dict[str, Any]:
    if isinstance(event, dict):
        try:
            event = _EVENT_ADAPTER.validate_python(event)
        except ValidationError as exc:
            raise StoreError(f"{where}: not a trajectory event: {exc}") from exc
    if not isinstance(event, _EVENT_TYPES):
        kind = type(event).__name__ if isinstance(event, BaseModel) else repr(type(event))
        raise StoreError(f"{where}: expected a trajectory event (message, tool_call, tool_result, guidance), got {kind}")
    payload = scrub_json(event.model_dump(mode="json", by_alias=True))
    check_json_clean(payload, where)
    return payload


def append_event(session: Session, episode_id: int, seq: int, event: Event | dict[str, Any]) -> bool:
    """Insert the event at `seq`; False when that exact event is already there (a replayed write)."""
    where = f"episode {episode_id}, seq {seq}"
    if seq < 0:
        raise StoreError(f"{where}: seq counts from 0")
    payload = _event_payload(event, where)
    episode = get_episode_row(session, episode_id)
    expected = next_seq(session, episode_id)
    if seq < expected:
        existing = session.scalars(select(EventRow).where(EventRow.episode_id == episode_id, EventRow.seq == seq)).one()
        if existing.payload == payload:
            return False
        raise EventConflictError(
            f"{where} already holds a different {existing.type!r} event (step {existing.step}); "
            f"refusing to overwrite it with a {payload['type']!r} event (step {payload['step']}). "
            "Resume from Episode.next_seq instead of re-numbering events."
        )
    if episode.status == "done":
        raise StoreError(f"{where}: episode is finished ({episode.exit_reason}); it takes no new events")
    if seq != expected:
        raise StoreError(f"{where}: events are appended in order and the next seq is {expected}")
    session.add(EventRow(episode_id=episode_id, seq=seq, step=payload["step"], type=payload["type"], payload=payload))
    session.flush()
    return True


def load_events(session: Session, episode_id: int) -> list[Event]:
    rows = session.scalars(select(EventRow).where(EventRow.episode_id == episode_id).order_by(EventRow.seq))
    events: list[Event] = []
    for row in rows:
        try:
            events.append(_EVENT_ADAPTER.validate_python(row.payload))
        except ValidationError as exc:
            raise StoreError(f"episode {episode_id}, seq {row.seq}: stored event does not parse: {exc}") from exc
    return events


def finish_episode_row(session: Session, episode_id: int, status: str, exit_reason: str, totals: dict[str, Any],
                       detail: str = "") -> EpisodeRow:
    if status not in ("done", "failed"):
        raise StoreError(f"episode {episode_id}: finish status must be 'done' or 'failed', not {status!r}")
    if not exit_reason:
        raise StoreError(f"episode {episode_id}: finishing needs a non-empty exit reason")
    check_json_clean(totals, f"episode {episode_id} totals")
    row = get_episode_row(session, episode_id)
    row.status, row.exit_reason, row.totals, row.finished = status, exit_reason, totals, utcnow()
    row.exit_detail = detail[:4000]
    return row
