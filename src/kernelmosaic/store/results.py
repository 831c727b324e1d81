"""Candidates, their verdicts and verified solutions, as operations on one open session.

A candidate is identified within its episode by the sha256 of its UTF-8 source; a solution is
only ever written for a candidate with an accepted verdict.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

from pydantic import BaseModel
from sqlalchemy import select
from sqlalchemy.orm import Session

from kernelmosaic.store.episodes import check_json_clean, get_episode_row
from kernelmosaic.store.errors import NotFoundError, StoreError
from kernelmosaic.store.schema import CandidateRow, EpisodeRow, SolutionRow, VerdictRow
from kernelmosaic.store.trajectory import Solution

__all__ = [
    "candidate_sha256",
    "record_candidate",
    "get_candidate_row",
    "record_verdict",
    "record_solution",
    "set_best",
    "load_best",
    "best_speedup",
]


def candidate_sha256(source: str) -> str:
    """The candidate's identity: sha256 of its source text encoded as UTF-8, hex."""
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


def record_candidate(session: Session, episode_id: int, source: str) -> CandidateRow:
    get_episode_row(session, episode_id)
    sha = candidate_sha256(source)
    row = get_candidate_row(session, episode_id, sha, missing_ok=True)
    if row is None:
        row = CandidateRow(episode_id=episode_id, sha256=sha, source=source)
        session.add(row)
        session.flush()
    return row


def get_candidate_row(session: Session, episode_id: int, sha: str, missing_ok: bool = False) -> CandidateRow | None:
    row = session.scalars(
        select(CandidateRow).where(CandidateRow.episode_id == episode_id, CandidateRow.sha256 == sha)
    ).first()
    if row is None and not missing_ok:
        raise NotFoundError(f"episode {episode_id} has no candidate {sha[:12]}; call record_candidate first")
    return row


def _speedup(full: dict[str, Any], key: str) -> float | None:
    value = (full.get("timing") or {}).get(key)
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def record_verdict(session: Session, episode_id: int, sha: str, verdict: dict[str, Any] | BaseModel) -> VerdictRow:
    """Store the verdict; an identical verdict already stored for the candidate is returned instead."""
    full = verdict.model_dump(mode="json", by_alias=True) if isinstance(verdict, BaseModel) else dict(verdict)
    where = f"episode {episode_id}, verdict for candidate {sha[:12]}"
    if not isinstance(full.get("status"), str) or not isinstance(full.get("accepted"), bool):
        raise StoreError(f"{where}: a verdict needs a string `status` and a boolean `accepted` (kernelmosaic.verdict/1)")
    claimed = full.get("candidate_sha256") or ""
    if claimed and claimed != sha:
        raise StoreError(f"{where}: the verdict is for candidate {claimed[:12]}, not this one")
    check_json_clean(full, where)
    candidate = get_candidate_row(session, episode_id, sha)
    # Verdicts carry fresh timings, so an identical one can only be a replayed write (a resume).
    for earlier in session.scalars(select(VerdictRow).where(VerdictRow.candidate_id == candidate.id)):
        if earlier.full == full:
            return earlier
    row = VerdictRow(
        candidate_id=candidate.id,
        status=full["status"],
        accepted=full["accepted"],
        speedup_vs_eager=_speedup(full, "speedup_vs_eager"),
        speedup_vs_compile=_speedup(full, "speedup_vs_compile"),
        full=full,
    )
    session.add(row)
    session.flush()
    return row


def _put_solution(session: Session, episode_id: int, candidate: CandidateRow, verdict: VerdictRow, step: int) -> SolutionRow:
    if not verdict.accepted:
        raise StoreError(f"episode {episode_id}, candidate {candidate.sha256[:12]}: only accepted verdicts make a solution")
    row = session.scalars(
        select(SolutionRow).where(SolutionRow.episode_id == episode_id, SolutionRow.candidate_id == candidate.id)
    ).first()
    if row is None:
        row = SolutionRow(episode_id=episode_id, candidate_id=candidate.id, verdict_id=verdict.id, step=step)
        session.add(row)
    else:
        row.verdict_id, row.step = verdict.id, step
    session.flush()
    return row


def record_solution(session: Session, episode_id: int, sha: str, step: int) -> SolutionRow:
    """Mark the candidate as a verified solution, backed by its latest accepted verdict."""
    candidate = get_candidate_row(session, episode_id, sha)
    verdict = session.scalars(
        select(VerdictRow)
        .where(VerdictRow.candidate_id == candidate.id, VerdictRow.accepted.is_(True))
        .order_by(VerdictRow.id.desc())
    ).first()
    if verdict is None:
        raise StoreError(f"episode {episode_id}, candidate {sha[:12]}: no accepted verdict, so it is not a solution")
    return _put_solution(session, episode_id, candidate, verdict, step)


def set_best(session: Session, episode: EpisodeRow, best: Solution) -> None:
    """Record `best` (candidate, its verdict, the solution) and point the episode at it."""
    candidate = record_candidate(session, episode.id, best.source)
    if candidate.sha256 != best.candidate_sha256:
        raise StoreError(
            f"episode {episode.id}: best solution claims candidate {best.candidate_sha256[:12]} but its source "
            f"hashes to {candidate.sha256[:12]} (store.candidate_sha256: sha256 of the UTF-8 source)"
        )
    verdict = record_verdict(session, episode.id, candidate.sha256, best.verdict)  # the stored one, if already there
    _put_solution(session, episode.id, candidate, verdict, best.step)
    episode.best_candidate_id = candidate.id


def _best_rows(session: Session, episode: EpisodeRow) -> tuple[CandidateRow, SolutionRow, VerdictRow] | None:
    if episode.best_candidate_id is None:
        return None
    candidate = session.get(CandidateRow, episode.best_candidate_id)
    solution = session.scalars(
        select(SolutionRow).where(SolutionRow.episode_id == episode.id, SolutionRow.candidate_id == candidate.id)
    ).one()
    return candidate, solution, session.get(VerdictRow, solution.verdict_id)


def load_best(session: Session, episode: EpisodeRow) -> Solution | None:
    rows = _best_rows(session, episode)
    if rows is None:
        return None
    candidate, solution, verdict = rows
    return Solution(source=candidate.source, candidate_sha256=candidate.sha256, verdict=verdict.full, step=solution.step)


def best_speedup(session: Session, episode: EpisodeRow) -> float:
    rows = _best_rows(session, episode)
    return 0.0 if rows is None else rows[2].speedup_vs_eager or 0.0
