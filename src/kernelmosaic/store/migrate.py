"""Bring a store written by an older KernelMosaic forward, in place, inside the opening transaction.

Version 1 -> 2: episodes gain `task_flags`, `header` and `exit_detail`; solutions gain the judgement of `contracts.verified`
(`verdict_ids`, `timed`, `sanitized`, `verified`, `task_flags`), recomputed from the stored verdicts, so a
version-1 "solution" that a later verdict rejected, or that was never timed, stops counting.
"""

from __future__ import annotations

import logging

from sqlalchemy import inspect, select, text
from sqlalchemy.orm import Session

from kernelmosaic.contracts.verdict import Verdict
from kernelmosaic.contracts.verified import task_flags_of
from kernelmosaic.store.schema import CandidateRow, EpisodeRow, VerdictRow

__all__ = ["migrate_v1"]

log = logging.getLogger(__name__)

_NEW_COLUMNS = {
    "episodes": {"task_flags": "JSON", "header": "JSON", "exit_detail": "TEXT"},
    "solutions": {"verdict_ids": "JSON", "timed": "BOOLEAN", "sanitized": "BOOLEAN", "verified": "BOOLEAN",
                  "task_flags": "JSON"},
}
_DEFAULTS = {"JSON": "'[]'", "BOOLEAN": "FALSE", "TEXT": "''"}


def migrate_v1(session: Session) -> None:
    from kernelmosaic.store.results import add_task_flags, refresh_solution

    connection = session.connection()
    present = {table: {c["name"] for c in inspect(connection).get_columns(table)} for table in _NEW_COLUMNS}
    json_type = "JSONB" if connection.dialect.name == "postgresql" else "JSON"
    for table, columns in _NEW_COLUMNS.items():
        for name, kind in columns.items():
            if name in present[table]:
                continue
            default = "'{}'" if name == "header" else _DEFAULTS[kind]
            sql_type = json_type if kind == "JSON" else kind
            connection.execute(text(f"ALTER TABLE {table} ADD COLUMN {name} {sql_type} DEFAULT {default}"))
    session.expire_all()
    for episode in session.scalars(select(EpisodeRow)):
        episode.task_flags = list(episode.task_flags or [])
        for candidate in session.scalars(select(CandidateRow).where(CandidateRow.episode_id == episode.id)):
            for row in session.scalars(select(VerdictRow).where(VerdictRow.candidate_id == candidate.id)):
                add_task_flags(session, episode, task_flags_of(Verdict.model_validate(row.full)))
            refresh_solution(session, episode, candidate)
    log.warning("store migrated from schema version 1 to 2: solutions re-judged with contracts.verified")
