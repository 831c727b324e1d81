"""Which task a problem file is the reference of, so the `verify` command can use the task's small shapes.

A problem file belongs to a task when it sits in that task's folder (`reference.py` beside `task.toml`) or when its
text is a bundled task's reference up to comments and whitespace (`tasks show ID --form reference > problem.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kernelmosaic.tasks.errors import TaskFormatError
from kernelmosaic.tasks.folder import BUILTIN_DIR, find_task_folders, load_task_folder
from kernelmosaic.tasks.hashing import source_hash
from kernelmosaic.tasks.schema import Task

__all__ = ["ProblemTask", "task_of_problem"]


@dataclass(frozen=True)
class ProblemTask:
    """The task a problem file is the reference of, and how it was recognised."""

    task: Task
    how: str
    """`task folder` or `bundled task`: where the match came from, for the message that names it."""


def _same_reference(folder: Path, digest: str) -> Task | None:
    try:
        task = load_task_folder(folder)
    except TaskFormatError:
        return None  # a broken task folder says nothing about this problem
    return task if task.hashes.reference == digest else None


def task_of_problem(problem: Path) -> ProblemTask | None:
    """The task whose reference `problem` is (its own folder first, then the bundled set), or None."""
    digest = source_hash(Path(problem).read_text(encoding="utf-8"))
    folder = Path(problem).resolve().parent
    if (folder / "task.toml").is_file() and (task := _same_reference(folder, digest)):
        return ProblemTask(task, "task folder")
    if not BUILTIN_DIR.is_dir():
        return None
    for candidate in find_task_folders(BUILTIN_DIR):
        reference = candidate / "reference.py"
        if reference.is_file() and source_hash(reference.read_text(encoding="utf-8")) == digest:
            if task := _same_reference(candidate, digest):
                return ProblemTask(task, "bundled task")
    return None
