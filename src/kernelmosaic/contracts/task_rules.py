"""The one registry of rules about tasks themselves: what `kernelmosaic tasks audit` checks and what every verdict
flags about its task (`task-*`). Both import it, so a rule has one id and one rationale wherever it is reported.

`severity` is the audit's: only load failures, non-determinism, degeneracy and spec/reference disagreement make an
audit fail (`reject`); size, coverage and device differences are flags. On a verdict every task rule is a flag
(the task, not the candidate, is at fault), and its solutions are kept but never counted as solved.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from kernelmosaic.contracts.verdict import Finding, Severity

__all__ = ["TaskRule", "RuleKind", "TASK_RULES", "task_finding", "AUDIT_SEVERITIES"]


RuleKind = Literal["load", "nondeterminism", "degeneracy", "spec", "size", "coverage", "device"]


class TaskRule(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

    id: str
    """Stable id, `task-*`, as it appears in `Finding.rule` of audit reports and verdicts."""
    severity: Severity
    """In an audit: `reject` fails the task, `flag` is recorded. On a verdict every task rule is a flag."""
    where: Literal["audit", "verdict", "both"]
    """Which check emits it: the task audit, the verifier's reference checks, or both."""
    kind: RuleKind
    """What it is about; summaries group by it (e.g. the degenerate problems of a benchmark)."""
    rationale: str


Where = Literal["audit", "verdict", "both"]


def _rules(kind: RuleKind, *rows: tuple[str, Severity, Where, str]) -> dict[str, TaskRule]:
    return {rid: TaskRule(id=rid, severity=sev, where=where, kind=kind, rationale=why) for rid, sev, where, why in rows}


TASK_RULES: dict[str, TaskRule] = {**_rules(
    "load",
    ("task-loads", "reject", "audit", "the reference does not import, lacks Model/get_inputs/get_init_inputs, or "
     "Model(*init) fails"),
    ("task-runs", "reject", "audit", "forward raises, or returns something other than tensors, on the audit device"),
    ("task-default-shapes", "reject", "audit", "the reference fails at its own (default) shapes (meta device)"),
    ("task-spec-parses", "reject", "audit", "the math spec does not parse or compile"),
    ("task-timeout", "reject", "audit", "the reference ran past the audit's per-task time limit (not cached: retried)"),
    ("task-worker-crash", "reject", "audit", "the reference killed its audit worker (not cached: retried)"),
), **_rules(
    "nondeterminism",
    ("task-nondeterministic", "reject", "both", "the reference disagrees with itself on the same inputs (dropout in "
     "train mode, random ops): no candidate can match it reliably"),
), **_rules(
    "degeneracy",
    ("task-finite-output", "reject", "audit", "the reference returns NaN or inf on its own inputs"),
    ("task-constant-output", "reject", "both", "the output does not depend on the inputs: a stored constant passes"),
    ("task-near-zero-output", "reject", "audit", "the output is (near) zero for every input seed"),
    ("task-zero-output-passes", "reject", "both", "returning zeros is within tolerance: a verdict on it is weak "
     "evidence"),
    ("task-mean-output-passes", "reject", "both", "returning a constant (the mean) is within tolerance"),
    ("task-identity-output-passes", "reject", "both", "returning an input unchanged is within tolerance"),
), **_rules(
    "spec",
    ("task-spec-inputs", "reject", "audit", "the spec's declared inputs disagree with get_inputs() (count, shape, "
     "dtype)"),
    ("task-spec-reference-mismatch", "reject", "audit", "spec and reference outputs differ"),
), **_rules(
    "size",
    ("task-small-shapes-too-large", "flag", "audit", "the audited shapes hold more than the element budget, even "
     "after shrinking; audits and CPU tests are slow, but the task is sound"),
    ("task-too-large-to-audit", "flag", "audit", "the reference does not fit its audit worker's memory (measured on "
     "the meta device, or it ran out); the task was not fully audited"),
    ("task-default-shapes-memory", "flag", "audit", "inputs plus outputs at the default shapes exceed the memory "
     "budget"),
), **_rules(
    "coverage",
    ("task-alternative-shapes", "flag", "audit", "the reference fails at an alternative shape set, which is then "
     "unusable for robustness checks"),
    ("task-positive-inputs-hide-sign", "flag", "audit", "get_inputs() draws only non-negative values while the "
     "output changes for negative ones: a kernel mishandling negatives would pass"),
    ("task-inputs-one-distribution", "flag", "verdict", "the reference is finite only on the task's own input "
     "distribution, so signed and scaled inputs were not used"),
), **_rules(
    "device",
    ("task-device-mismatch", "flag", "audit", "the reference's outputs on CPU and CUDA differ beyond tolerance, or "
     "it runs on only one of them"),
)}

AUDIT_SEVERITIES: dict[str, Severity] = {r.id: r.severity for r in TASK_RULES.values() if r.where != "verdict"}
"""Rule id -> audit severity; shipped to the audit worker in its job (the worker imports only stdlib and torch)."""


def task_finding(rule: str, message: str, evidence: str = "", *, audit: bool) -> Finding:
    """A Finding for a registered task rule: its audit severity in an audit, a flag on a verdict."""
    if rule not in TASK_RULES:
        raise KeyError(f"unknown task rule {rule!r}; known: {sorted(TASK_RULES)}")
    return Finding(rule=rule, severity=TASK_RULES[rule].severity if audit else "flag", message=message,
                   evidence=evidence)
