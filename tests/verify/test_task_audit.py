"""Task-side findings from reference data: each degenerate task is flagged, a healthy one is not."""

from __future__ import annotations

import torch

from kernelmosaic.verify.reference_data import ReferenceData, RefSetup, reference_trials
from kernelmosaic.verify.sandbox.kmworker.common import package_outputs
from kernelmosaic.verify.task_audit import audit_reference


def _refdata(fn, dists=("given", "signed", "scaled"), repeat=None) -> ReferenceData:
    trials = []
    for k, dist in enumerate(dists):
        g = torch.Generator().manual_seed(k)
        a, b = torch.randn(256, generator=g), torch.randn(256, generator=g)
        out = fn(a, b)
        again = (repeat or fn)(a, b)
        trials.append({"distribution": dist, "skipped": False, "inputs": [a, b], "outputs": package_outputs(out),
                       "repeat": package_outputs(again), "mutates_inputs": False})
    return ReferenceData(setup=RefSetup(init_inputs=[], state_dict={}, flops=0.0),
                         trials=reference_trials({"trials": trials, "large": False}, "a task").trials, env={})


def _rules(fn, **kw) -> set[str]:
    return {f.rule for f in audit_reference(_refdata(fn, **kw), 1e-4, 1e-4)}


def test_healthy_task_has_no_findings():
    assert _rules(lambda a, b: torch.relu(a + b)) == set()


def test_stochastic_reference():
    assert "task-nondeterministic" in _rules(lambda a, b: a + b, repeat=lambda a, b: a + b + torch.rand(256))


def test_constant_output():
    assert "task-constant-output" in _rules(lambda a, b: torch.ones(4) * 3.0)


def test_zero_output_passes():
    assert "task-zero-output-passes" in _rules(lambda a, b: (a - a) + 1e-7 * b)


def test_integer_outputs_are_made_trivial_too():
    """An argmin's int64 indices: zeros (or their mean) would not pass, so the task gets no trivial-output flag; an
    all-zero index output still gets it."""
    assert _rules(lambda a, b: torch.stack([a, b]).argmin(dim=0)) == set()
    assert "task-zero-output-passes" in _rules(lambda a, b: torch.zeros(8, dtype=torch.long) + (b[:8] > 99).long())


def test_mean_output_passes():
    assert "task-mean-output-passes" in _rules(lambda a, b: torch.full((8,), 2.5) + 1e-7 * b[:8])


def test_identity_passes():
    assert "task-identity-output-passes" in _rules(lambda a, b: a + 1e-8 * b)


def test_only_one_distribution_usable():
    assert "task-inputs-one-distribution" in _rules(lambda a, b: torch.relu(a + b), dists=("given",) * 3)


def test_every_runtime_finding_has_a_rationale():
    import pathlib
    import re

    import kernelmosaic.verify
    from kernelmosaic.verify.runtime_rules import RUNTIME_RULES
    from kernelmosaic.verify.static import RULES

    src = "".join(p.read_text() for p in pathlib.Path(kernelmosaic.verify.__file__).parent.glob("*.py"))
    emitted = set(re.findall(r'rule=f?"([a-z0-9-]+)', src)) | {f"sanitizer-{t}" for t in ("memcheck", "racecheck", "initcheck")}
    # a static rule judged on what was built (verify/binary_check.py) has the static rule's rationale
    assert emitted - {"sanitizer-"} <= set(RUNTIME_RULES) | set(RULES), emitted - set(RUNTIME_RULES) - set(RULES)


def test_task_flags_come_from_the_one_task_rule_registry():
    import pathlib
    import re

    import kernelmosaic.tasks.audit
    import kernelmosaic.verify
    from kernelmosaic.contracts.task_rules import AUDIT_SEVERITIES, TASK_RULES

    verify_src = (pathlib.Path(kernelmosaic.verify.__file__).parent / "task_audit.py").read_text()
    flagged = set(re.findall(r'flag\("(task-[a-z-]+)"', verify_src))
    assert flagged and flagged <= {r for r, rule in TASK_RULES.items() if rule.where in ("verdict", "both")}
    audit_src = "".join(p.read_text() for p in pathlib.Path(kernelmosaic.tasks.audit.__file__).parent.glob("*.py"))
    emitted = set(re.findall(r'"(task-[a-z-]+)"', audit_src))
    assert emitted and emitted <= set(AUDIT_SEVERITIES), emitted - set(AUDIT_SEVERITIES)
    assert all(rid.startswith("task-") for rid in TASK_RULES)
