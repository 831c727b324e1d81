"""The bundled seed set meets the counts the project promises, and every task passes its audit."""

from __future__ import annotations

import pytest

from kernelmosaic.tasks.audit.runner import AuditConfig, audit_tasks
from kernelmosaic.tasks.sources import BUILTIN_DIR, load_tasks_lenient
from kernelmosaic.tasks.validate import BUILTIN_REQUIREMENTS, validate_tasks

pytestmark = pytest.mark.skipif(not BUILTIN_DIR.is_dir(), reason="builtin task set not present")


def test_builtin_set_validates() -> None:
    tasks, errors = load_tasks_lenient("builtin")
    report = validate_tasks("builtin", tasks, errors, BUILTIN_REQUIREMENTS)
    assert report.passed, "\n".join(str(i) for i in report.issues)
    assert report.tasks >= 150 and report.with_spec >= 40
    assert all(t.forms.nl.strip() and t.forms.reference.strip() for t in tasks)


@pytest.mark.slow
def test_every_builtin_task_passes_its_audit() -> None:
    tasks, _ = load_tasks_lenient("builtin")
    failed = [r for r in audit_tasks(tasks, AuditConfig(jobs=2)) if not r.passed]
    assert not failed, [(r.task_id, [f"{f.rule}: {f.message} {f.evidence}" for f in r.rejects]) for r in failed]
