"""`verify --shapes small|full`: judge a task's reference at the task's small shapes, as the agent does on the CPU.

Full-size tasks are sized for a GPU; on the CPU one elementwise task at its own sizes takes minutes. A problem file
that is a task's reference (its folder's `reference.py`, or a bundled task's reference) gets that task's
`[shapes] small` overrides on the CPU by default; any other problem runs at its own sizes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from kernelmosaic.verify.requests import InputError

__all__ = ["Shapes", "ProblemAtShapes", "problem_at_shapes"]

Shapes = Literal["small", "full"]


@dataclass(frozen=True)
class ProblemAtShapes:
    """The problem file to judge, and one line for the person saying which sizes it has and why."""

    path: Path
    note: str = ""


def problem_at_shapes(problem: Path, shapes: Shapes | None, device: str, scratch: Path) -> ProblemAtShapes:
    """`problem` as given (`full`, or the default on CUDA) or rewritten at its task's small shapes into `scratch`.

    Raises `InputError` when `small` is asked for a problem whose small shapes are not known."""
    if shapes == "full" or (shapes is None and device != "cpu"):
        return ProblemAtShapes(problem)
    from kernelmosaic.tasks.problem_task import task_of_problem

    found = task_of_problem(problem)
    small = found.task.shapes.small if found is not None else {}
    if not small:
        if shapes == "small":
            raise InputError(f"--shapes small: {problem} is not the reference of a task with small shapes (no "
                             "task.toml with [shapes] small beside it, and no bundled task has this reference); "
                             "its sizes are its own module constants")
        return ProblemAtShapes(problem, f"shapes: {problem.name}'s own sizes (it is not a known task's reference); "
                                        "on the CPU large sizes take minutes")
    path = Path(scratch) / problem.name
    path.write_text(found.task.problem_source("small"), encoding="utf-8")
    sizes = ", ".join(f"{k}={v}" for k, v in small.items())
    return ProblemAtShapes(path, f"shapes: small ({sizes}) of {found.how} {found.task.id}; "
                                 "--shapes full runs its own sizes")
