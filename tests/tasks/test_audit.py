"""Audits: each rule catches a task built to break it, and a legitimate task stays clean.

All fixtures are audited in one batch (workers are separate processes; starting them is the slow part).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from kernelmosaic.tasks.audit.runner import AuditConfig, audit_tasks
from kernelmosaic.tasks.schema import AuditReport

from .conftest import make_task

RELU_SPEC = "dim batch_size, dim\ninput x: f32[batch_size, dim]\noutput y[b, d] = max(x[b, d], 0.0)\n"
ABS_SPEC = RELU_SPEC.replace("max(x[b, d], 0.0)", "abs(x[b, d])")

FIXTURES = [
    make_task("clean", "torch.relu(x) * 2.0", RELU_SPEC.replace("0.0)", "0.0) * 2.0")),
    make_task("spec_disagrees", "torch.relu(x)", ABS_SPEC),
    make_task("spec_wrong_shape", "torch.relu(x)", RELU_SPEC.replace("f32[batch_size, dim]", "f32[dim, batch_size]")),
    make_task("constant", "torch.ones_like(x) * 3.0"),
    make_task("dropout_train", "self.drop(x)", init_body="        self.drop = nn.Dropout(0.5)\n"),
    make_task("zero_passes", "torch.softmax(x, dim=1) * 1e-5"),
    make_task("identity_passes", "x + 1e-7 * torch.tanh(x)"),
    make_task("positive_inputs", "torch.relu(x) + 0.5 * torch.sigmoid(x)", inputs="torch.rand(batch_size, dim)"),
    # KernelBench's ReLU draws torch.rand: its input matches its output, but the verifier's signed trials do not
    make_task("relu_of_rand", "torch.relu(x)", inputs="torch.rand(batch_size, dim)"),
    make_task("crashes", "x.view(-1, 7)"),
    make_task("bad_alternative", "x.view(x.shape[0], -1, 64).sum(dim=2)", alternatives=[{"dim": 4096}, {"dim": 100}]),
    make_task("huge_default", "torch.relu(x)", batch_size=1 << 22),
    # Last in each worker's share (round-robin over 2 workers), so neither forces a restart.
    make_task("exits", "__import__('os')._exit(3)"),
    make_task("hangs", "__import__('time').sleep(60) or x"),
]


@pytest.fixture(scope="module")
def reports() -> dict[str, AuditReport]:
    got = audit_tasks(FIXTURES, AuditConfig(jobs=2, task_timeout_s=10))
    return {r.task_id: r for r in got}


def _rules(report: AuditReport, severity: str = "reject") -> set[str]:
    return {f.rule for f in report.findings if f.severity == severity}


def test_legitimate_task_passes_every_check(reports: dict[str, AuditReport]) -> None:
    report = reports["clean"]
    assert report.passed and report.findings == []
    assert {"task-loads", "task-runs", "task-nondeterministic", "task-constant-output", "task-near-zero-output", "task-zero-output-passes",
            "task-identity-output-passes", "task-positive-inputs-hide-sign", "task-spec-reference-mismatch"} <= set(report.checks)
    assert report.reference_hash == FIXTURES[0].hashes.reference


def test_spec_reference_disagreement_is_a_finding(reports: dict[str, AuditReport]) -> None:
    assert _rules(reports["spec_disagrees"]) == {"task-spec-reference-mismatch"}
    assert "max abs error" in reports["spec_disagrees"].findings[0].evidence
    assert _rules(reports["spec_wrong_shape"]) == {"task-spec-inputs"}


def test_constant_output_is_rejected(reports: dict[str, AuditReport]) -> None:
    assert "task-constant-output" in _rules(reports["constant"])


def test_stochastic_reference_is_rejected(reports: dict[str, AuditReport]) -> None:
    assert _rules(reports["dropout_train"]) == {"task-nondeterministic"}


def test_outputs_a_trivial_answer_would_match_are_rejected(reports: dict[str, AuditReport]) -> None:
    assert _rules(reports["zero_passes"]) == {"task-zero-output-passes"}
    assert _rules(reports["identity_passes"]) == {"task-identity-output-passes"}


def test_a_trivial_answer_that_only_matches_non_negative_inputs_is_a_flag_not_a_failure(reports) -> None:
    report = reports["relu_of_rand"]
    assert report.passed and _rules(report, "flag") == {"task-positive-inputs-hide-sign"}, report.findings


def test_all_positive_inputs_that_hide_semantics_are_flagged(reports: dict[str, AuditReport]) -> None:
    report = reports["positive_inputs"]
    assert report.passed and _rules(report, "flag") == {"task-positive-inputs-hide-sign"}
    assert reports["clean"].flags == []


def test_failures_inside_the_worker_never_reach_the_caller(reports: dict[str, AuditReport]) -> None:
    assert _rules(reports["crashes"]) == {"task-runs"}
    assert "RuntimeError" in reports["crashes"].findings[0].evidence
    assert _rules(reports["exits"]) == {"task-worker-crash"}
    # Tasks after the crash in the same worker still got audited.
    assert len(reports) == len(FIXTURES)


def test_shapes_are_checked_on_the_meta_device(reports: dict[str, AuditReport]) -> None:
    report = reports["bad_alternative"]  # an unusable alternative is a flag: the task itself is sound
    assert _rules(report, "flag") == {"task-alternative-shapes"} and report.passed
    assert "alternatives[1]" in report.findings[0].message
    assert _rules(reports["huge_default"], "flag") == {"task-default-shapes-memory"}
    assert reports["huge_default"].passed


def test_hang_is_killed_after_the_timeout(reports: dict[str, AuditReport]) -> None:
    assert _rules(reports["hangs"]) == {"task-timeout"}


def test_worker_imports_only_stdlib_and_torch() -> None:
    # Statically: the worker's own modules import the standard library, torch and each other only.
    import ast
    from pathlib import Path

    import kernelmosaic.tasks.audit as audit_pkg

    for name in ("worker.py", "probes.py", "meta.py", "compare.py"):
        tree = ast.parse((Path(audit_pkg.__file__).parent / name).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                for mod in mods:
                    top = mod.split(".")[0]
                    assert top in sys.stdlib_module_names or top == "torch" or mod.startswith(
                        "kernelmosaic.tasks.audit"), f"{name} imports {mod}"
    # Dynamically: `python -m` imports the parent packages first; they must stay free of heavy imports.
    code = ("import sys, kernelmosaic.tasks.audit; "
            "print(','.join(m for m in ('pydantic', 'typer', 'rich', 'datasketch', 'pyarrow', 'torch') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_worker_restores_torch_globals_a_reference_changed() -> None:
    # In-process on purpose: this checks the worker function itself, with fixture code we wrote.
    import torch

    from kernelmosaic.tasks.audit.runner import build_job
    from kernelmosaic.tasks.audit.worker import audit_one

    task = make_task("sets_dtype", "torch.relu(x)")
    task = task.model_copy(update={"forms": task.forms.model_copy(update={
        "reference": task.forms.reference.replace("batch_size = 64", "torch.set_default_dtype(torch.float64)\n"
                                                  "batch_size = 64")})})
    job, _ = build_job(task, AuditConfig())
    before = torch.get_default_dtype()
    result = audit_one(job)
    assert torch.get_default_dtype() == before
    assert result["findings"] == []
