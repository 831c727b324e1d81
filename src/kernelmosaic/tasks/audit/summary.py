"""A summary of many audits (a benchmark's problems): counts per level, the failed problems grouped by the kind
of their rules (degenerate, non-deterministic, load, spec), flags per rule. Written as `summary.json` and
`summary.md` by `tasks audit --summary DIR`.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from kernelmosaic.contracts.task_rules import TASK_RULES
from kernelmosaic.tasks.schema import AuditReport, Task

__all__ = ["AuditSummary", "FailedProblem", "LevelCounts", "summarize_audits", "write_summary"]

_FAILING_KINDS = ("degeneracy", "nondeterminism", "load", "spec")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class FailedProblem(_Model):
    task_id: str
    name: str
    """The problem's name in its origin (KernelBench's `23_Conv3d_...`), else the task id."""
    level: int
    rules: list[str]
    """Its rejecting rules of this kind."""
    message: str
    """The first rejecting finding's message."""


class LevelCounts(_Model):
    tasks: int = 0
    passed: int = 0
    flagged: int = 0
    """Passed with at least one flag."""


class AuditSummary(_Model):
    schema_: str = Field(default="kernelmosaic.audit-summary/1", alias="schema")
    source: str
    tasks: int
    passed: int
    from_cache: int = 0
    """Reports taken from the audit cache instead of being run again."""
    seconds: float = 0.0
    """Wall time of the whole audit."""
    devices: dict[str, int] = Field(default_factory=dict)
    """How many tasks ran first on each device."""
    derived_shapes: int = 0
    """How many tasks were audited at shapes derived from their reference (no small shapes, stated ones too large)."""
    by_level: dict[int, LevelCounts] = Field(default_factory=dict)
    failed: dict[str, list[FailedProblem]] = Field(default_factory=dict)
    """Rule kind (`degeneracy`, `nondeterminism`, `load`, `spec`) -> the problems that failed for it."""
    flags: dict[str, int] = Field(default_factory=dict)
    """Rule id -> how many tasks carry that flag."""


def summarize_audits(source: str, tasks: list[Task], reports: list[AuditReport], from_cache: int = 0,
                     seconds: float = 0.0) -> AuditSummary:
    """One summary of `reports` (in the order of `tasks`)."""
    summary = AuditSummary(source=source, tasks=len(reports), passed=sum(r.passed for r in reports),
                           from_cache=from_cache, seconds=round(seconds, 1),
                           derived_shapes=sum(bool(r.shapes) for r in reports))
    flags: Counter[str] = Counter()
    devices: Counter[str] = Counter()
    for task, report in zip(tasks, reports, strict=True):
        counts = summary.by_level.setdefault(task.level, LevelCounts())
        counts.tasks += 1
        counts.passed += report.passed
        counts.flagged += report.passed and bool(report.flags)
        flags.update({f.rule for f in report.flags})
        devices.update(report.devices[:1])
        for kind in _FAILING_KINDS:
            rejects = [f for f in report.rejects if TASK_RULES[f.rule].kind == kind]
            if rejects:
                summary.failed.setdefault(kind, []).append(FailedProblem(
                    task_id=task.id, name=task.provenance.original_name or task.id, level=task.level,
                    rules=sorted({f.rule for f in rejects}), message=rejects[0].message))
    summary.flags, summary.devices = dict(sorted(flags.items())), dict(sorted(devices.items()))
    summary.by_level = dict(sorted(summary.by_level.items()))
    return summary


def _markdown(s: AuditSummary) -> str:
    lines = [f"# Audit of {s.source}", "",
             f"{s.passed}/{s.tasks} passed; {s.from_cache} from the cache; {s.derived_shapes} at derived shapes; "
             f"{s.seconds:.0f} s; first device: " + (", ".join(f"{d} {n}" for d, n in s.devices.items()) or "-"), "",
             "| level | tasks | passed | flagged |", "|---|---|---|---|"]
    lines += [f"| {lvl} | {c.tasks} | {c.passed} | {c.flagged} |" for lvl, c in s.by_level.items()]
    titles = {"degeneracy": "Degenerate problems", "nondeterminism": "Non-deterministic references",
              "load": "Problems that do not load or run", "spec": "Spec and reference disagree"}
    for kind in _FAILING_KINDS:
        problems = s.failed.get(kind, [])
        lines += ["", f"## {titles[kind]} ({len(problems)})", ""]
        lines += [f"- L{p.level} `{p.name}`: {', '.join(p.rules)} ({p.message})" for p in problems] or ["none"]
    lines += ["", "## Flags", ""]
    lines += [f"- `{rule}`: {n}" for rule, n in s.flags.items()] or ["none"]
    return "\n".join(lines) + "\n"


def write_summary(summary: AuditSummary, folder: Path) -> tuple[Path, Path]:
    """`summary.json` and `summary.md` in `folder` (created)."""
    folder.mkdir(parents=True, exist_ok=True)
    json_path, md_path = folder / "summary.json", folder / "summary.md"
    json_path.write_text(summary.model_dump_json(by_alias=True, indent=2), encoding="utf-8")
    md_path.write_text(_markdown(summary), encoding="utf-8")
    return json_path, md_path
