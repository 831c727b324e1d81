"""Which tasks a run takes: one rule for `generate` and `evaluate`."""

from __future__ import annotations

from collections.abc import Sequence

from kernelmosaic.tasks.schema import Task

__all__ = ["select_tasks"]


def select_tasks(tasks: Sequence[Task], task_ids: Sequence[str] = (), limit: int = 0,
                 levels: Sequence[int] = ()) -> list[Task]:
    """Filter by level, then by id (in the order given; an unknown id is an error naming it), then cap the count
    (`limit` 0: all)."""
    kept = [t for t in tasks if not levels or t.level in levels]
    if task_ids:
        by_id = {t.id: t for t in kept}
        unknown = [i for i in task_ids if i not in by_id]
        if unknown:
            after = " (after --levels)" if levels else ""
            raise ValueError(f"unknown task id(s){after}: {', '.join(unknown)}")
        kept = [by_id[i] for i in task_ids]
    return kept[:limit] if limit else kept
