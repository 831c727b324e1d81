"""What a run records of each of its tasks (level, category, title), so its report and metrics group without reading
the task source again: `generate` and `evaluate` both store it in the run's settings (`RunConfig.task_meta`)."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from kernelmosaic.tasks.schema import Task

__all__ = ["TaskMeta", "task_meta"]


class TaskMeta(BaseModel):
    model_config = ConfigDict(extra="forbid")

    level: int = 0
    category: str = "unknown"
    title: str = ""


def task_meta(tasks: Sequence[Task], unknown: Sequence[str] = ()) -> dict[str, TaskMeta]:
    """Each task's record; tasks in `unknown` (made from a bare problem file) have no level or category."""
    return {t.id: TaskMeta(level=0, category="unknown", title=t.title) if t.id in unknown
            else TaskMeta(level=t.level, category=t.category, title=t.title) for t in tasks}
