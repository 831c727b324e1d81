"""Which sizes a problem is judged at (`verify.shapes`), one rule for `verify`, `verify-batch` and the Python API.

Full-size tasks are sized for a GPU; on the CPU one elementwise task at its own sizes takes minutes. A problem file
that is a task's reference (its folder's `reference.py`, or a bundled task's reference) is judged at that task's
`[shapes] small` on the CPU by default (`auto`); any other problem runs at its own sizes. The small form is written
once per content beneath the judge folder (`<cache_dir>-judge/shapes/`), out of candidates' reach, since the
reference worker imports it.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from kernelmosaic.contracts.hashing import problem_hash
from kernelmosaic.paths import judge_dir, write_atomic
from kernelmosaic.verify.config import VerifyConfig
from kernelmosaic.verify.requests import Alternative, InputError

__all__ = ["Shapes", "ProblemAtShapes", "problem_at_shapes", "alternatives_to_judge"]

Shapes = Literal["auto", "small", "full"]


@dataclass(frozen=True)
class ProblemAtShapes:
    """The problem file to judge, and one line for the person saying which sizes it has and why."""

    path: Path
    note: str = ""


def problem_at_shapes(problem: Path, config: VerifyConfig) -> ProblemAtShapes:
    """`problem` as given (`full`, `auto` on CUDA or for a problem that is no task's reference) or its task's small
    form (`small`, `auto` on the CPU). Raises `InputError` when `small` is asked of a problem without small shapes."""
    if config.shapes == "full":
        return ProblemAtShapes(problem, "full: the problem's own sizes (verify.shapes = full)")
    if config.shapes == "auto" and config.device != "cpu":
        return ProblemAtShapes(problem, f"the problem's own sizes (verify.shapes = auto on {config.device})")
    path = Path(problem)
    found = _task_of(str(path.resolve()), path.stat().st_mtime_ns)
    small = found.task.shapes.small if found is not None else {}
    if not small:
        if config.shapes == "small":
            raise InputError(f"--shapes small (verify.shapes = small): {problem} is not the reference of a task with small shapes (no "
                             "task.toml with [shapes] small beside it, and no bundled task has this reference); "
                             "its sizes are its own module constants")
        return ProblemAtShapes(problem, f"{path.name}'s own sizes (not a known task's reference); on the CPU large "
                                        "sizes take minutes")
    source = found.task.problem_source("small")
    out = _judge_file(config, "shapes", source, f"_{path.name}")
    sizes = ", ".join(f"{k}={v}" for k, v in small.items())
    return ProblemAtShapes(out, f"small ({sizes}) of {found.how} {found.task.id} (verify.shapes = {config.shapes}; "
                                "full runs its own sizes)")


@functools.lru_cache(maxsize=256)
def _task_of(path: str, _mtime_ns: int):
    """The task whose reference the file is (cached per path and modification time: a batch asks once per problem)."""
    from kernelmosaic.tasks.problem_task import task_of_problem

    return task_of_problem(Path(path))


def alternatives_to_judge(problem_src: str, given: Sequence[Alternative], config: VerifyConfig
                          ) -> tuple[list[Alternative], str]:
    """The alternatives a verdict judges, and the note its `robustness` section carries: the caller's when it gives
    any; else, with `derive_alt` on, the problem at the size check's sizes (`tasks.shapes.size_check_sizes`),
    written once per content under `<cache_dir>-judge/derived/`; else none, the note saying why."""
    if given:
        return list(given), f"{len(given)} alternative(s) given by the caller"
    if not config.derive_alt:
        return [], "no alternative sizes judged: verify.derive_alt is off (--no-derive-alt)"
    from kernelmosaic.tasks.shapes import apply_shape_overrides, size_check_sizes

    check = size_check_sizes(problem_src)
    if not check.overrides:
        return [], f"no alternative sizes could be derived: {check.why}"
    source = apply_shape_overrides(problem_src, check.overrides)
    path = _judge_file(config, "derived", source, ".py")
    label = ", ".join(f"{n}={v}" for n, v in check.overrides.items())
    return [Alternative(label=label, problem=path)], (
        f"derived sizes {label} (the problem's input-size constants moved, their power-of-two factors kept); sizes "
        "the reference cannot run are not used")


def _judge_file(config: VerifyConfig, kind: str, source: str, suffix: str) -> Path:
    """`source` as a problem file beneath `<cache_dir>-judge/<kind>/`, named by its hash and `suffix`, written once
    per content: the reference imports it, so it lies out of candidates' reach. Written beside, then renamed: a
    concurrent verdict never reads half a file, and each writer (threads of one process too: `evaluate --concurrency`)
    has its own part file."""
    folder = judge_dir(config.cache_dir) / kind
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{problem_hash(source)[:24]}{suffix}"
    if not path.is_file():
        write_atomic(path, source)
    return path
