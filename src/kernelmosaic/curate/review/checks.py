"""What the review page shows about each task besides its forms: audit results grouped as a reviewer
judges them (degeneracy, spec = reference, loading, shapes and size), decontamination and duplicates.

Everything here reads stored audit reports or parses code; nothing runs task code (audits that need to
run it go through `tasks.audit`'s isolated workers, before the server starts).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from kernelmosaic.curate.duplicates import DuplicateReport
from kernelmosaic.curate.opsig import operator_signature
from kernelmosaic.tasks.decontam import DecontamReport
from kernelmosaic.tasks.schema import Task

__all__ = ["Check", "TaskChecks", "GROUPS", "task_checks"]

GROUPS: dict[str, tuple[str, ...]] = {
    "degeneracy": ("task-constant-output", "task-near-zero-output", "task-zero-output-passes",
                   "task-identity-output-passes", "task-mean-output-passes", "task-finite-output",
                   "task-positive-inputs-hide-sign", "task-nondeterministic"),
    "spec = reference": ("task-spec-parses", "task-spec-inputs", "task-spec-reference-mismatch"),
    "loads and runs": ("task-loads", "task-runs", "task-default-shapes", "task-worker-crash", "task-timeout",
                       "task-device-mismatch"),
    "shapes and size": ("task-alternative-shapes", "task-default-shapes-memory", "task-small-shapes-too-large",
                        "task-too-large-to-audit"),
}
State = Literal["pass", "flag", "fail", "not run", "n/a"]


class Check(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    name: str
    state: State
    detail: str = ""
    """Findings' messages, or why the check did not run."""


class TaskChecks(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    task_id: str
    checks: list[Check] = Field(default_factory=list)
    operators: list[str] = Field(default_factory=list)
    """The reference's operator signature (from its AST)."""
    reference_lines: int = 0
    reference_chars: int = 0

    @property
    def worst(self) -> State:
        states = {c.state for c in self.checks}
        return next((s for s in ("fail", "flag", "not run") if s in states), "pass")  # type: ignore[return-value]


def _audit_checks(task: Task) -> list[Check]:
    audit = task.audit
    if audit is None:
        return [Check(name=name, state="not run", detail="no audit report: run `kernelmosaic tasks audit --write` "
                      "or serve with --audit") for name in GROUPS]
    stale = audit.reference_hash and audit.reference_hash != task.hashes.reference
    checks = []
    for name, rules in GROUPS.items():
        if name == "spec = reference" and not task.has_spec:
            checks.append(Check(name=name, state="n/a", detail="the task has no spec"))
            continue
        found = [f for f in audit.findings if f.rule in rules]
        ran = any(r in audit.checks for r in rules) or bool(found)
        state: State = ("fail" if any(f.severity == "reject" for f in found) else "flag" if found
                        else "pass" if ran else "not run")
        detail = "; ".join(f"{f.rule}: {f.message}" for f in found)
        if stale:
            detail = ("audit is stale (the reference changed since); " + detail).rstrip("; ")
            state = "not run" if state == "pass" else state
        checks.append(Check(name=name, state=state, detail=detail))
    return checks


def task_checks(task: Task, duplicates: DuplicateReport | None, decontam: DecontamReport | None) -> TaskChecks:
    checks = _audit_checks(task)
    if decontam is None:
        checks.append(Check(name="decontamination", state="not run", detail="serve with --against EVAL_SET"))
    else:
        hits = [m for m in decontam.matches if m.task_id == task.id]
        checks.append(Check(name="decontamination", state="fail" if hits else "pass",
                            detail="; ".join(f"like {m.against_origin or m.against_id} (AST {m.ast_similarity:.2f}, "
                                             f"tokens {m.token_jaccard:.2f})" for m in hits)
                            or f"no near match in {decontam.against or 'the evaluation set'}"))
    if duplicates is None:
        checks.append(Check(name="duplicates", state="not run"))
    else:
        clusters = duplicates.cluster_of(task.id)
        detail = "; ".join(f"{c.kind} copy of {', '.join(t for t in c.task_ids if t != task.id)}"
                           f" (keep {c.keep})" for c in clusters)
        checks.append(Check(name="duplicates", state="flag" if clusters else "pass", detail=detail))
    reference = task.forms.reference
    return TaskChecks(task_id=task.id, checks=checks, operators=operator_signature(reference),
                      reference_lines=reference.count("\n") + 1, reference_chars=len(reference))
