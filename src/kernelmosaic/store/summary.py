"""Rows to typed records, and per-run aggregates (pass rate, best speedups, tokens, cost)."""

from __future__ import annotations

import math
from collections import Counter
from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from kernelmosaic.contracts.trajectory import Event, MessageEvent, ToolResultEvent, Totals
from kernelmosaic.store.episodes import get_run_row, load_events
from kernelmosaic.store.records import EpisodeInfo, RunInfo, RunSummary
from kernelmosaic.store.results import best_speedup, speedup_caveat
from kernelmosaic.store.schema import CandidateRow, EpisodeRow, RunRow, SolutionRow, VerdictRow

__all__ = ["as_utc", "totals_from_events", "run_info", "episode_info", "run_summary"]


def as_utc(moment: datetime | None) -> datetime | None:
    """SQLite hands back naive datetimes; everything the store writes is UTC."""
    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=UTC)


def totals_from_events(events: list[Event]) -> Totals:
    """Totals of an episode that recorded none (still running, or cut off by a crash); wall time is unknown."""
    totals = Totals()
    for event in events:
        if isinstance(event, MessageEvent):
            totals.prompt_tokens += event.usage.prompt_tokens
            totals.completion_tokens += event.usage.completion_tokens
            totals.cost_usd += event.usage.cost_usd
            totals.turns += event.message.role == "assistant"
        elif isinstance(event, ToolResultEvent):
            totals.gpu_seconds += event.gpu_seconds
    return totals


def run_info(row: RunRow) -> RunInfo:
    return RunInfo(
        id=row.id,
        name=row.name,
        created=as_utc(row.created),
        finished=as_utc(row.finished),
        model=row.model,
        task_source=row.task_source,
        config=row.config or {},
        status=row.status,
    )


def _totals(session: Session, row: EpisodeRow) -> Totals:
    if row.totals is not None:
        return Totals.model_validate(row.totals)
    return totals_from_events(load_events(session, row.id))


def _solved(session: Session, episode_id: int) -> bool:
    query = select(SolutionRow.id).where(SolutionRow.episode_id == episode_id, SolutionRow.verified.is_(True))
    return session.scalars(query.limit(1)).first() is not None


def episode_info(session: Session, row: EpisodeRow) -> EpisodeInfo:
    totals = _totals(session, row)
    speedup, caveat = best_speedup(session, row)
    best_sha = ""
    if row.best_candidate_id is not None:
        best_sha = session.get(CandidateRow, row.best_candidate_id).sha256
    return EpisodeInfo(
        id=row.id,
        run_id=row.run_id,
        task_id=row.task_id,
        task_sha256=row.task_sha256,
        problem_sha256=row.problem_sha256,
        status=row.status,
        exit_reason=row.exit_reason,
        exit_detail=row.exit_detail or "",
        best_candidate_sha256=best_sha,
        task_flags=list(row.task_flags or []),
        solved=_solved(session, row.id),
        best_speedup_vs_eager=speedup,
        best_speedup_caveat=caveat,
        totals=totals,
        started=as_utc(row.started),
        finished=as_utc(row.finished),
    )


def _solutions(session: Session, run_id: int) -> list[tuple[int, str, float | None, str, bool]]:
    """(episode id, task id, speedup vs eager, its caveat, verified) of every solution row in the run (flagged ones
    too)."""
    query = (
        select(EpisodeRow.id, EpisodeRow.task_id, VerdictRow, SolutionRow.verified)
        .join(SolutionRow, SolutionRow.episode_id == EpisodeRow.id)
        .join(VerdictRow, VerdictRow.id == SolutionRow.verdict_id)
        .where(EpisodeRow.run_id == run_id)
    )
    return [(episode_id, task_id, verdict.speedup_vs_eager, speedup_caveat(verdict), verified)
            for episode_id, task_id, verdict, verified in session.execute(query)]


def run_summary(session: Session, run_id: int) -> RunSummary:
    run = get_run_row(session, run_id)
    rows = session.scalars(select(EpisodeRow).where(EpisodeRow.run_id == run_id).order_by(EpisodeRow.id)).all()
    statuses = Counter(row.status for row in rows)
    solutions = _solutions(session, run_id)
    best: dict[str, float] = {}
    shaky: dict[str, tuple[float, str]] = {}
    for _, task_id, speedup, caveat, verified in solutions:
        if not verified or speedup is None or speedup <= 0:
            continue
        if caveat:
            shaky[task_id] = max((speedup, caveat), shaky.get(task_id, (0.0, "")))
        else:
            best[task_id] = max(speedup, best.get(task_id, 0.0))
    totals = Totals()
    for row in rows:
        episode_totals = _totals(session, row)
        for field in Totals.model_fields:
            setattr(totals, field, getattr(totals, field) + getattr(episode_totals, field))
    finished_ids = {row.id for row in rows if row.status != "running"}
    solved_ids = {episode_id for episode_id, _, _, _, verified in solutions if verified}
    flagged = {row.task_id: list(row.task_flags) for row in rows if row.task_flags}
    finished = len(finished_ids)
    geomean = math.exp(sum(math.log(v) for v in best.values()) / len(best)) if best else 0.0
    return RunSummary(
        run=run_info(run),
        episodes=len(rows),
        done=statuses["done"],
        running=statuses["running"],
        failed=statuses["failed"],
        solved=len(solved_ids),
        flagged_tasks=flagged,
        pass_rate=len(solved_ids & finished_ids) / finished if finished else 0.0,
        best_speedups=best,
        unreliable_speedups={task: caveat for task, (_, caveat) in shaky.items() if task not in best},
        geomean_speedup_vs_eager=geomean,
        exit_reasons=dict(Counter(row.exit_reason for row in rows if row.status != "running")),
        totals=totals,
    )

