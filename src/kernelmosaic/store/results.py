"""Candidates, their verdicts and verified solutions, as operations on one open session.

A candidate is identified within its episode by the sha256 of its UTF-8 source. Solution rows are never written
by hand: after every verdict the candidate is judged again with `contracts.verified.check_candidate` (the one
definition), so a later rejection demotes it and a task flag marks every solution of the episode.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

from pydantic import ValidationError
from sqlalchemy import select
from sqlalchemy.orm import Session

from kernelmosaic.contracts.speedup import timing_speedups
from kernelmosaic.contracts.trajectory import Solution
from kernelmosaic.contracts.verdict import Timing, Verdict
from kernelmosaic.contracts.verified import Verification, check_candidate, task_flags_of
from kernelmosaic.scrub import scrub_json
from kernelmosaic.store.episodes import check_json_clean, get_episode_row
from kernelmosaic.store.errors import NotFoundError, StoreError
from kernelmosaic.store.schema import CandidateRow, EpisodeRow, SolutionRow, VerdictRow

__all__ = [
    "candidate_sha256",
    "record_candidate",
    "get_candidate_row",
    "record_verdict",
    "add_task_flags",
    "refresh_solution",
    "set_best",
    "load_best",
    "best_speedup",
    "load_solutions",
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


def _speedup(value: float | None) -> float | None:
    return float(value) if value is not None and math.isfinite(value) else None


def _typed(verdict: Verdict | dict[str, Any], where: str) -> Verdict:
    if isinstance(verdict, Verdict):
        return verdict
    try:
        return Verdict.model_validate(verdict)
    except ValidationError as exc:
        raise StoreError(f"{where}: not a kernelmosaic.verdict/1 object: {exc}") from None


def record_verdict(session: Session, episode_id: int, sha: str, verdict: Verdict | dict[str, Any]) -> VerdictRow:
    """Store the verdict, then re-judge the candidate; an identical verdict already stored is returned instead."""
    where = f"episode {episode_id}, verdict for candidate {sha[:12]}"
    typed = _typed(verdict, where)
    if typed.candidate_sha256 and typed.candidate_sha256 != sha:
        raise StoreError(f"{where}: the verdict is for candidate {typed.candidate_sha256[:12]}, not this one")
    full = scrub_json(typed.model_dump(mode="json", by_alias=True))
    check_json_clean(full, where)
    candidate = get_candidate_row(session, episode_id, sha)
    # Verdicts carry fresh timings, so an identical one can only be a replayed write (a resume).
    for earlier in session.scalars(select(VerdictRow).where(VerdictRow.candidate_id == candidate.id)):
        if earlier.full == full:
            return earlier
    timing = typed.timing
    row = VerdictRow(candidate_id=candidate.id, status=typed.status.value, accepted=typed.accepted,
                     speedup_vs_eager=_speedup(timing.speedup_vs_eager) if timing else None,
                     speedup_vs_compile=_speedup(timing.speedup_vs_compile) if timing else None, full=full)
    session.add(row)
    session.flush()
    episode = get_episode_row(session, episode_id)
    if not add_task_flags(session, episode, task_flags_of(typed)):
        refresh_solution(session, episode, candidate)
    return row


def add_task_flags(session: Session, episode: EpisodeRow, flags: list[str]) -> bool:
    """Record task-level flags on the episode; when any is new, every solution of the episode is re-judged."""
    new = sorted(set(flags) - set(episode.task_flags or []))
    if not new:
        return False
    episode.task_flags = sorted(set(episode.task_flags or []) | set(new))
    for candidate in session.scalars(select(CandidateRow).where(CandidateRow.episode_id == episode.id)):
        refresh_solution(session, episode, candidate)
    return True


def _history(session: Session, candidate: CandidateRow) -> list[tuple[VerdictRow, Verdict]]:
    rows = session.scalars(select(VerdictRow).where(VerdictRow.candidate_id == candidate.id).order_by(VerdictRow.id))
    return [(row, Verdict.model_validate(row.full)) for row in rows]


def refresh_solution(session: Session, episode: EpisodeRow, candidate: CandidateRow,
                     step: int | None = None) -> Verification:
    """Judge the candidate from its stored verdicts and the episode's flags; write, update or drop its solution row."""
    history = _history(session, candidate)
    verification = check_candidate([v for _, v in history], episode.task_flags or [])
    row = session.scalars(select(SolutionRow).where(SolutionRow.episode_id == episode.id,
                                                    SolutionRow.candidate_id == candidate.id)).first()
    if not verification.candidate_ok:
        if row is not None:
            session.delete(row)
            if episode.best_candidate_id == candidate.id:
                episode.best_candidate_id = None  # a later rejection demotes the best
        session.flush()
        return verification
    if row is None:
        row = SolutionRow(episode_id=episode.id, candidate_id=candidate.id, verdict_id=history[-1][0].id, step=step or 0)
        session.add(row)
    row.verdict_id = history[-1][0].id
    row.step = row.step if step is None else step
    row.verdict_ids = [history[i][0].id for i in verification.rests_on]
    row.timed, row.sanitized, row.verified = verification.timed, verification.sanitized, verification.verified
    row.task_flags = verification.task_flags
    session.flush()
    return verification


def set_best(session: Session, episode: EpisodeRow, best: Solution) -> None:
    """Record `best` (candidate, its verdict) and point the episode at it when it passes on its own record."""
    candidate = record_candidate(session, episode.id, best.source)
    if candidate.sha256 != best.candidate_sha256:
        raise StoreError(
            f"episode {episode.id}: best solution claims candidate {best.candidate_sha256[:12]} but its source "
            f"hashes to {candidate.sha256[:12]} (store.candidate_sha256: sha256 of the UTF-8 source)"
        )
    record_verdict(session, episode.id, candidate.sha256, best.verdict)  # the stored one, if already there
    verification = refresh_solution(session, episode, candidate, step=best.step)
    episode.best_candidate_id = candidate.id if verification.candidate_ok else None


def _best_rows(session: Session, episode: EpisodeRow) -> tuple[CandidateRow, SolutionRow, VerdictRow] | None:
    if episode.best_candidate_id is None:
        return None
    candidate = session.get(CandidateRow, episode.best_candidate_id)
    solution = session.scalars(
        select(SolutionRow).where(SolutionRow.episode_id == episode.id, SolutionRow.candidate_id == candidate.id)
    ).first()
    if solution is None:
        return None
    return candidate, solution, session.get(VerdictRow, solution.verdict_id)


def load_best(session: Session, episode: EpisodeRow) -> Solution | None:
    rows = _best_rows(session, episode)
    if rows is None:
        return None
    candidate, solution, verdict = rows
    verification = check_candidate([v for _, v in _history(session, candidate)], episode.task_flags or [])
    return Solution(source=candidate.source, candidate_sha256=candidate.sha256, verdict=Verdict.model_validate(verdict.full),
                    step=solution.step, verification=verification)


def speedup_caveat(row: VerdictRow) -> str:
    """Why the verdict's speedup vs eager is not a measurement (`contracts.speedup`: its quartile range is too wide),
    or "" when it is one (or was not measured)."""
    timing = (row.full or {}).get("timing")
    if not timing:
        return ""
    try:
        parsed = Timing.model_validate(timing)
    except ValidationError:
        return ""
    return timing_speedups(parsed)["eager_device"].caveat()


def best_speedup(session: Session, episode: EpisodeRow) -> tuple[float, str]:
    """Speedup vs eager of the latest timed verdict the best solution rests on (0.0 when none), and its caveat
    (`speedup_caveat`)."""
    rows = _best_rows(session, episode)
    if rows is None:
        return 0.0, ""
    timed = [v for v in (session.get(VerdictRow, i) for i in rows[1].verdict_ids) if v is not None and v.speedup_vs_eager]
    return (timed[-1].speedup_vs_eager or 0.0, speedup_caveat(timed[-1])) if timed else (0.0, "")


def load_solutions(session: Session, episode: EpisodeRow) -> list[Solution]:
    """Every solution row of the episode (verified or flagged), each with its judgement, oldest first."""
    out = []
    for row in session.scalars(select(SolutionRow).where(SolutionRow.episode_id == episode.id).order_by(SolutionRow.id)):
        candidate = session.get(CandidateRow, row.candidate_id)
        history = [v for _, v in _history(session, candidate)]
        out.append(Solution(source=candidate.source, candidate_sha256=candidate.sha256, verdict=history[-1],
                            step=row.step, verification=check_candidate(history, episode.task_flags or [])))
    return out
