"""The episodes an export may use: finished, verified by the one definition, task unflagged and not turned away by
the review's latest decision; each with its task."""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field

from kernelmosaic.contracts.trajectory import Trajectory
from kernelmosaic.curate.review.gate import ReviewExclusion, review_exclusions
from kernelmosaic.store import Store
from kernelmosaic.store.records import RunInfo
from kernelmosaic.tasks.audit.cache import audit_failure
from kernelmosaic.tasks.schema import Task

__all__ = ["ExportError", "Candidate", "Collected", "collect_verified"]

log = logging.getLogger(__name__)


class ExportError(ValueError):
    """The export cannot proceed (unknown run, a task that cannot be found, an unusable source); says which."""


@dataclass
class Candidate:
    """One exportable episode."""

    episode_id: int
    run: RunInfo
    trajectory: Trajectory
    task: Task


@dataclass
class Collected:
    episodes: list[Candidate] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    """Why the other episodes were left out: `not_finished`, `flagged_task`, `not_verified`, `no_tool_schemas`,
    `review_reject`, `review_needs-edit` (verified episodes of a task the review's latest decision turned away)."""
    runs: list[RunInfo] = field(default_factory=list)
    review_excluded: dict[str, ReviewExclusion] = field(default_factory=dict)
    """Task id -> the review decision that removed its verified episodes."""


def _task_lookup(source: str, cache: dict[str, dict[str, Task]]) -> dict[str, Task]:
    if source not in cache:
        from kernelmosaic.tasks.sources import load_tasks

        try:
            cache[source] = {t.id: t for t in load_tasks(source)}
        except Exception as exc:  # noqa: BLE001 - any loader failure is reported with the source that caused it
            raise ExportError(f"task source {source!r}: cannot load: {exc}") from None
    return cache[source]


def collect_verified(store: Store, run_ids: list[int], tasks: str | list[Task] = "") -> Collected:
    """Verified episodes of `run_ids` (all runs when empty). `tasks` supplies the tasks: a source, a list, or empty
    for each run's own task source."""
    known = {r.id: r for r in store.list_runs()}
    missing = [r for r in run_ids if r not in known]
    if missing:
        raise ExportError(f"no run {', '.join(map(str, missing))} in the store (runs: {', '.join(map(str, known)) or 'none'})")
    out = Collected(runs=[known[r] for r in (run_ids or sorted(known))])
    cache: dict[str, dict[str, Task]] = {}
    given = {t.id: t for t in tasks} if isinstance(tasks, list) else None
    turned_away = review_exclusions(store)
    for run in out.runs:
        for info in store.list_episodes(run.id):
            if info.status != "done":
                out.skipped["not_finished"] += 1
                continue
            if info.task_flags:
                out.skipped["flagged_task"] += 1
                continue
            if not info.solved:
                out.skipped["not_verified"] += 1
                continue
            trajectory = store.load_trajectory(info.id)
            if trajectory.best is None or not trajectory.best.verified:  # the store's flag and the solution agree
                out.skipped["not_verified"] += 1
                continue
            if not trajectory.tools:  # recorded before the tool schemas were: its conversation cannot be rebuilt whole
                out.skipped["no_tool_schemas"] += 1
                continue
            by_id = given if given is not None else _task_lookup(tasks or run.task_source, cache)
            task = by_id.get(info.task_id)
            if task is None:
                where = "the tasks given" if given is not None else repr(tasks or run.task_source)
                raise ExportError(f"run {run.id}: task {info.task_id!r} is not in {where}; pass the run's tasks with --tasks")
            if audit_failure(task):  # audited (and failed) since the run: flagged now, so never training data
                out.skipped["flagged_task"] += 1
                continue
            if task.id in turned_away:  # the review's latest decision, before or after the run
                out.review_excluded[task.id] = turned_away[task.id]
                out.skipped[f"review_{turned_away[task.id].decision}"] += 1
                continue
            out.episodes.append(Candidate(info.id, run, trajectory, task))
    log.info("verified episodes: %d; skipped: %s", len(out.episodes), dict(out.skipped))
    return out
