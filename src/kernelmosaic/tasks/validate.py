"""Static validation of a task set: each task's files are well-formed and consistent, ids and references are
unique, and (for the builtin set) the counts the project promises are met. Audits are run separately.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from kernelmosaic import pysource
from kernelmosaic.tasks.errors import TaskFormatError, located
from kernelmosaic.tasks.schema import Task
from kernelmosaic.tasks.shapes import ShapeOverrideError, apply_shape_overrides, module_constants
from kernelmosaic.tasks.spec import SpecError, compile_program, parse_spec

__all__ = ["Issue", "Requirements", "ValidationReport", "validate_tasks", "BUILTIN_REQUIREMENTS"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class Issue(_Model):
    file: str
    """The file at fault (a task folder's file, or the source for set-level problems)."""
    line: int = 0
    col: int = 0
    task_id: str = ""
    message: str

    def __str__(self) -> str:
        return located(self.file, self.message, self.line, self.col)


class Requirements(_Model):
    min_tasks: int = 0
    """Fewest tasks the set must hold."""
    min_spec: int = 0
    """Fewest tasks with a math spec."""
    require_small_shapes: bool = False
    """Every task must give `shapes.small` (CPU audits and tests run on them)."""
    levels: list[int] = Field(default_factory=lambda: [1, 2, 3, 4])
    """Levels allowed in the set."""
    level_dirs: bool = False
    """Task folders must sit in `L<level>/` folders (the builtin layout)."""


BUILTIN_REQUIREMENTS = Requirements(min_tasks=150, min_spec=40, require_small_shapes=True,
                                    levels=[1, 2, 3], level_dirs=True)


class ValidationReport(_Model):
    source: str
    tasks: int = 0
    with_spec: int = 0
    by_level: dict[str, int] = Field(default_factory=dict)
    by_category: dict[str, int] = Field(default_factory=dict)
    issues: list[Issue] = Field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.issues


def _file(task: Task, name: str) -> str:
    return str(Path(task.origin) / name) if task.origin and "#" not in task.origin else f"{task.origin or task.id}"


def _check_reference(task: Task, req: Requirements) -> list[Issue]:
    file = _file(task, "reference.py")
    try:
        tree = pysource.parse(task.forms.reference)
    except SyntaxError as exc:
        return [Issue(file=file, line=exc.lineno or 0, col=exc.offset or 0, task_id=task.id,
                      message=f"reference does not parse: {exc.msg}")]
    names = {n.name for n in tree.body if isinstance(n, ast.ClassDef | ast.FunctionDef)}
    issues = [Issue(file=file, task_id=task.id, message=f"reference defines no {need}")
              for need in ("Model", "get_inputs", "get_init_inputs") if need not in names]
    toml = _file(task, "task.toml")
    if req.require_small_shapes and not task.shapes.small:
        issues.append(Issue(file=toml, task_id=task.id, message="shapes.small is missing (required: CPU audits "
                            "run on it)"))
    for label, overrides in [("small", task.shapes.small)] + [
            (f"alternatives[{i}]", alt) for i, alt in enumerate(task.shapes.alternatives)]:
        try:
            apply_shape_overrides(task.forms.reference, overrides)
        except ShapeOverrideError as exc:
            issues.append(Issue(file=toml, task_id=task.id, message=f"shapes.{label}: {exc}"))
    return issues


def _check_spec(task: Task) -> list[Issue]:
    file = _file(task, "spec.km")
    try:
        program = parse_spec(task.forms.spec, file)
    except SpecError as exc:
        return [Issue(file=file, line=exc.line, col=exc.col, task_id=task.id, message=exc.message)]
    issues = []
    for label in ("default", "small"):
        try:
            constants = module_constants(task.problem_source(label))
        except (SyntaxError, ShapeOverrideError):
            return issues  # reported by the reference check
        missing = [d for d in program.dims if d.value is None and not isinstance(constants.get(d.name), int)]
        if missing:
            return [Issue(file=file, line=d.line, col=1, task_id=task.id,
                          message=f"size '{d.name}' has no value: the reference defines no constant '{d.name}'")
                    for d in missing]
        sizes = {k: v for k, v in constants.items() if isinstance(v, int)}
        try:
            compile_program(program, sizes, file)
        except SpecError as exc:
            issues.append(Issue(file=file, line=exc.line, col=exc.col, task_id=task.id,
                                message=f"{exc.message} (with the {label} shapes)"))
            break
    return issues


def validate_tasks(source: str, tasks: list[Task], load_errors: list[TaskFormatError] | None = None,
                   requirements: Requirements | None = None) -> ValidationReport:
    """Check each task and the set as a whole; `load_errors` are folders that did not load at all."""
    req = requirements or Requirements()
    report = ValidationReport(source=source, tasks=len(tasks), with_spec=sum(t.has_spec for t in tasks),
                              by_level={str(k): v for k, v in sorted(Counter(t.level for t in tasks).items())},
                              by_category=dict(sorted(Counter(t.category for t in tasks).items())))
    report.issues += [Issue(file=e.file, line=e.line, col=e.col, message=e.problem) for e in load_errors or []]
    for task in tasks:
        report.issues += _check_reference(task, req)
        if task.has_spec:
            report.issues += _check_spec(task)
        if task.level not in req.levels:
            report.issues.append(Issue(file=_file(task, "task.toml"), task_id=task.id,
                                       message=f"level {task.level} is not allowed here ({req.levels})"))
        folder = Path(task.origin)
        if req.level_dirs and task.origin and folder.parent.name != f"L{task.level}":
            report.issues.append(Issue(file=_file(task, "task.toml"), task_id=task.id,
                                       message=f"level {task.level} task lives in '{folder.parent.name}', "
                                               f"expected 'L{task.level}'"))
    for key, label in ((lambda t: t.id, "id"), (lambda t: t.hashes.reference, "reference (same hash)")):
        seen: dict[str, Task] = {}
        for task in tasks:
            other = seen.setdefault(key(task), task)
            if other is not task:
                report.issues.append(Issue(file=_file(task, "task.toml"), task_id=task.id,
                                           message=f"duplicate {label} of task '{other.id}'"))
    if len(tasks) < req.min_tasks:
        report.issues.append(Issue(file=source, message=f"{len(tasks)} tasks, at least {req.min_tasks} required"))
    if report.with_spec < req.min_spec:
        report.issues.append(Issue(file=source, message=f"{report.with_spec} tasks with a spec, at least "
                                                        f"{req.min_spec} required"))
    return report
