"""Findings about the task itself, from the reference data the verifier already has.

A task whose reference is stochastic, constant, or matched by a trivial output (zeros, the mean, an input
returned unchanged) lets a cheating kernel pass; verdicts on such tasks carry a `task-*` flag so they are not
mistaken for evidence. These checks are cheap: they reuse the trials' inputs and reference outputs. Rule ids and
rationales come from the one task-rule registry (contracts/task_rules.py) that `tasks audit` uses too.
"""

from __future__ import annotations

import torch

from kernelmosaic.contracts.task_rules import task_finding
from kernelmosaic.contracts.verdict import Finding
from kernelmosaic.verify.compare import compare_outputs
from kernelmosaic.verify.reference_data import ReferenceData

__all__ = ["audit_reference"]


def _replace(packaged: dict, make) -> dict:
    """Every output tensor made trivial, integer ones too: an argmin's indices left as the reference gives them
    would "pass" as zeros (a false `task-zero-output-passes` on an honest int64 output, blind round 11)."""
    return {**packaged, "tensors": [make(t) for t in packaged["tensors"]]}


def _passes(ref: dict, got: dict, atol: float, rtol: float) -> bool:
    return compare_outputs(ref, got, atol, rtol).ok


def audit_reference(refdata: ReferenceData, atol: float, rtol: float) -> list[Finding]:
    trials = refdata.usable
    if not trials or refdata.large:  # large-output mode: no output is here to audit (the verdict's `large-output-mode`)
        return []
    findings = []

    def flag(rule: str, message: str, evidence: str = "") -> None:
        findings.append(task_finding(rule, message, evidence, audit=False))

    if any(not (t.repeat is not None and _passes(t.outputs, t.repeat, atol, rtol)) for t in trials):
        flag("task-nondeterministic", "the reference disagrees with itself on the same inputs (dropout in train mode, "
             "random ops in forward?)")
    if len(trials) > 1 and all(_passes(trials[0].outputs, t.outputs, 0.0, 0.0) for t in trials[1:]):
        flag("task-constant-output", "the reference returns the same output for every input")
    if all(_passes(t.outputs, _replace(t.outputs, torch.zeros_like), atol, rtol) for t in trials):
        flag("task-zero-output-passes", "an all-zero output passes the tolerance check on every trial")
    elif all(_passes(t.outputs, _replace(t.outputs, lambda x: torch.full_like(x, float(x.double().mean()))),
                     atol, rtol) for t in trials):
        flag("task-mean-output-passes", "a constant output (the mean) passes the tolerance check on every trial")
    for i in range(len(trials[0].inputs)):
        def identity(t, i=i):
            x = t.inputs[i]
            meta = t.outputs["meta"]
            if not isinstance(x, torch.Tensor) or len(meta) != 1 or list(x.shape) != meta[0].get("shape"):
                return None
            return {**t.outputs, "tensors": [x.to(t.outputs["tensors"][0].dtype)]}

        if all((ident := identity(t)) is not None and _passes(t.outputs, ident, atol, rtol) for t in trials):
            flag("task-identity-output-passes", f"returning input {i} unchanged passes the tolerance check", f"input {i}")
    dists = {t.distribution for t in trials}
    if dists == {"given"} and len(refdata.trials) > 1:
        flag("task-inputs-one-distribution", "the reference is finite only on the task's own input distribution, so "
             "signed and scaled inputs were not used")
    return findings
