"""Synthesizer: deterministic, and its output validates and passes audits (spec == reference included)."""

from __future__ import annotations

from pathlib import Path

from kernelmosaic.tasks.audit.runner import AuditConfig, audit_tasks
from kernelmosaic.tasks.folder import save_task_folder
from kernelmosaic.tasks.sources import load_tasks
from kernelmosaic.tasks.spec import compile_spec
from kernelmosaic.tasks.synth import synthesize, synthesize_audited
from kernelmosaic.tasks.validate import Requirements, validate_tasks


def test_same_seed_same_tasks_other_seed_other_tasks() -> None:
    first, again, other = synthesize(40, seed=3), synthesize(40, seed=3), synthesize(40, seed=4)
    assert [t.to_dict() for t in first] == [t.to_dict() for t in again]
    assert [t.hashes.reference for t in first] != [t.hashes.reference for t in other]
    assert len({t.id for t in first}) == 40 and len({t.hashes.reference for t in first}) == 40
    # A longer run extends the same sequence (the audit gate relies on it).
    assert [t.id for t in synthesize(45, seed=3)[:40]] == [t.id for t in first]


def test_synthesized_tasks_validate_and_carry_all_forms(tmp_path: Path) -> None:
    tasks = synthesize(60, seed=0)
    for task in tasks:
        save_task_folder(task, tmp_path)
    loaded = load_tasks(str(tmp_path))
    report = validate_tasks(str(tmp_path), loaded, [], Requirements(require_small_shapes=True, level_dirs=True))
    assert report.passed, [str(i) for i in report.issues]
    with_spec = [t for t in tasks if t.has_spec]
    assert len(with_spec) >= 20
    for task in with_spec:
        compile_spec(task.forms.spec, {"batch_size": 2, "in_features": 3, "out_features": 4, "out_channels": 2,
                                       "height": 3, "width": 3})
    assert all(t.level == 2 and t.category == "fused" and t.forms.nl for t in tasks)


def test_synthesized_specs_agree_with_references_in_audits() -> None:
    tasks = [t for t in synthesize(40, seed=1) if t.has_spec][:8]
    reports = audit_tasks(tasks, AuditConfig(jobs=2))
    assert all(r.passed for r in reports), [(r.task_id, [f.message for f in r.rejects]) for r in reports]
    assert all("task-spec-reference-mismatch" in r.checks for r in reports)


def test_audit_gate_keeps_only_passing_tasks() -> None:
    kept, rejected = synthesize_audited(6, seed=2, config=AuditConfig(jobs=2))
    assert len(kept) == 6 and rejected >= 0
    assert all(t.audit is not None and t.audit.passed for t in kept)
