"""Existing candidates to judge: KernelBench's runs layout, a folder of problem + candidates, or a JSONL manifest.

KernelBench's layout is `level_X/problem_Y/sample_Z/<file>.py` (also `level_X/problem_Y/sample_Z.py` and its flat
`level_X_problem_Y_sample_Z*.py` names); its problems come from `--tasks kernelbench:PATH`, matched on level and
problem id. A folder of `<name>/problem.py` + `candidate*.py` and a manifest of {problem, candidate} rows are
`verify-batch`'s formats; each problem file becomes a task of its own unless `--tasks` holds one with that id.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from kernelmosaic.tasks.schema import Forms, Task
from kernelmosaic.verify.batch import discover_pairs
from kernelmosaic.verify.verifier import InputError

__all__ = ["Generation", "discover_generations"]

_NESTED = re.compile(r"^level_?(\d+)/problem_?(\d+)/sample_?(\d+)(?:\.py|/[^/]+\.py)$")
_FLAT = re.compile(r"^level_?(\d+)_problem_?(\d+)_sample_?(\d+)[^/]*\.py$")


class Generation(BaseModel):
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    task: Task
    sample: int
    candidate: Path
    problem: Path | None = None
    """The problem file to judge against; None: the task's reference (its `small` shapes on CPU)."""


def _slug(text: str) -> str:
    return re.sub(r"_+", "_", re.sub(r"[^a-z0-9]+", "_", text.lower())).strip("_") or "task"


def _kernelbench(root: Path, tasks: Sequence[Task]) -> list[Generation]:
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        match = _NESTED.match(rel) or _FLAT.match(rel)
        if match:
            found.append((int(match.group(1)), int(match.group(2)), int(match.group(3)), path))
    if not found:
        return []
    if not tasks:
        raise InputError(f"{root}: KernelBench's runs layout needs its problems: pass --tasks kernelbench:PATH")
    by_key = {(t.level, t.provenance.problem_id): t for t in tasks if t.provenance.problem_id is not None}
    out = []
    for level, problem, sample, path in found:
        task = by_key.get((level, problem))
        if task is None:
            raise InputError(f"{path}: no task of level {level} with problem id {problem} in --tasks")
        out.append(Generation(task=task, sample=sample, candidate=path))
    return out


def _own_task(name: str, problem: Path, tasks: dict[str, Task]) -> Task:
    task_id = _slug(name)
    if task_id in tasks:
        return tasks[task_id]
    try:
        reference = problem.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"problem {problem}: cannot be read ({exc})") from exc
    return Task(id=task_id, title=name, level=1, category="elementwise", forms=Forms(nl="", reference=reference),
                origin=str(problem))


def _pairs(source: Path, tasks: Sequence[Task]) -> list[Generation]:
    by_id = {t.id: t for t in tasks}
    counts: dict[str, int] = {}
    out = []
    for pair in discover_pairs(source):
        name = pair.problem.parent.name if pair.problem.stem == "problem" else pair.problem.stem
        task = _own_task(name, pair.problem, by_id)
        sample = counts.get(task.id, 0)
        counts[task.id] = sample + 1
        out.append(Generation(task=task, sample=sample, candidate=pair.candidate,
                              problem=None if task.id in by_id else pair.problem))
    return out


def discover_generations(source: Path, tasks: Sequence[Task]) -> list[Generation]:
    """Every candidate under `source`, with its task and sample index; InputError names what is unusable."""
    source = Path(source)
    if source.is_dir():
        found = _kernelbench(source, tasks)
        if found:
            return found
    elif not source.is_file():
        raise InputError(f"--generations {source}: no such folder or manifest")
    generations = _pairs(source, tasks)
    for g in generations:
        if not g.candidate.is_file():
            raise InputError(f"candidate {g.candidate}: no such file")
    return generations
