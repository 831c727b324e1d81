"""The audit cache: keyed by task content and audit settings, written by every `tasks audit`, read by
`tasks audit --cached` and by the generate gate; a stale entry is never used.

One real audit (two tasks, one worker) feeds the CLI and gate tests; the unit tests build reports by hand.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kernelmosaic.agent.runner import GenerateConfig, plan_tasks
from kernelmosaic.contracts.task_rules import task_finding
from kernelmosaic.tasks.audit.cache import audit_cache_dir, audit_failure, audit_key, cached_audit, save_audit
from kernelmosaic.tasks.audit.runner import AuditConfig
from kernelmosaic.tasks.cli import app
from kernelmosaic.tasks.folder import save_task_folder
from kernelmosaic.tasks.schema import AuditReport, Shapes, Task
from kernelmosaic.tasks.sources import load_tasks

from .conftest import make_task

runner = CliRunner()


def _report(task: Task, *rules: str) -> AuditReport:
    findings = [task_finding(r, f"{r} fixture", audit=True) for r in rules]
    return AuditReport(task_id=task.id, passed=not any(f.severity == "reject" for f in findings), findings=findings,
                       checks=list(rules) or ["task-loads"], reference_hash=task.hashes.reference)


def _edited(task: Task, old: str, new: str) -> Task:
    reference = task.forms.reference.replace(old, new)
    assert reference != task.forms.reference
    return task.model_copy(update={"forms": task.forms.model_copy(update={"reference": reference})})


def test_the_cache_lives_beside_the_build_cache(private_cache: Path) -> None:
    assert audit_cache_dir() == private_cache


def test_an_entry_is_found_only_for_the_content_and_settings_it_was_made_from(private_cache: Path) -> None:
    task = make_task("relu", "torch.relu(x)")
    path = save_audit(task, _report(task, "task-constant-output"))
    assert path is not None and path.parent == private_cache and path.stem == audit_key(task)
    hit = cached_audit(task)
    assert hit is not None and not hit.passed and [f.rule for f in hit.rejects] == ["task-constant-output"]
    # The same content under another id (an imported copy) shares the entry and gets its own id back.
    assert cached_audit(task.model_copy(update={"id": "relu_copy"})).task_id == "relu_copy"
    # Anything that decides the outcome changes the key: the reference, the shapes audited, the precision, settings.
    assert cached_audit(_edited(task, "torch.relu(x)", "torch.relu(x) * 2.0")) is None
    assert cached_audit(task.model_copy(update={"shapes": Shapes(small={"batch_size": 8, "dim": 64})})) is None
    assert cached_audit(task.model_copy(update={"dtype": "fp16"})) is None
    assert cached_audit(task, AuditConfig(jobs=1, seeds=[0, 1])) is None
    # Settings that cannot change a pass or a fail do not.
    assert cached_audit(task, AuditConfig(jobs=7, task_timeout_s=5, device="cpu")) is not None


def test_damaged_entries_are_misses_and_retried_failures_are_not_stored(private_cache: Path,
                                                                         caplog: pytest.LogCaptureFixture) -> None:
    task = make_task("relu", "torch.relu(x)")
    path = save_audit(task, _report(task))
    path.write_text("{not json")
    with caplog.at_level(logging.WARNING):
        assert cached_audit(task) is None
    assert str(path) in caplog.text
    # A report copied in from another content (file renamed by hand) is refused by its reference hash.
    other = make_task("other", "torch.tanh(x)")
    save_audit(other, _report(other, "task-constant-output"))
    (private_cache / f"{audit_key(other)}.json").replace(path)
    assert cached_audit(task) is None
    assert save_audit(task, _report(task, "task-timeout")) is None
    assert save_audit(task, _report(task, "task-worker-crash")) is None
    with pytest.raises(ValueError, match="not made from task 'relu'"):
        save_audit(task, _report(other))


def test_the_gate_reads_the_task_audit_when_current_else_the_cache() -> None:
    task = make_task("relu", "torch.relu(x)")
    assert audit_failure(task) == ""
    save_audit(task, _report(task, "task-zero-output-passes", "task-small-shapes-too-large"))
    assert audit_failure(task) == "audit failed: task-zero-output-passes"
    task.audit = _report(task)  # a current audit.json that passed wins over the cache
    assert audit_failure(task) == ""
    task.audit = _report(task).model_copy(update={"reference_hash": "0" * 64})  # a stale one does not
    assert audit_failure(task) == "audit failed: task-zero-output-passes"
    edited = _edited(task, "torch.relu(x)", "torch.relu(x) + 1.0")
    assert audit_failure(edited) == "", "a cached audit of an older reference never gates"


@pytest.fixture
def audited_set(tmp_path: Path) -> Path:
    """A folder of a clean and a degenerate task, audited once through the CLI (without --write)."""
    for task in (make_task("clean", "torch.relu(x) * 2.0"), make_task("constant", "torch.ones_like(x) * 3.0")):
        save_task_folder(task, tmp_path / "set")
    res = runner.invoke(app, ["audit", str(tmp_path / "set"), "--jobs", "1", "--json"])
    assert res.exit_code == 1, res.output
    assert {json.loads(line)["task_id"] for line in res.stdout.splitlines()} == {"clean", "constant"}
    assert not list((tmp_path / "set").rglob("audit.json"))
    return tmp_path / "set"


def test_cli_reports_from_the_cache_without_rerunning_and_generate_gates_on_it(
        audited_set: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import kernelmosaic.tasks.audit.runner as audit_runner

    def refuse(*_a: object, **_k: object) -> None:
        raise AssertionError("audit_tasks ran")

    plan = plan_tasks(load_tasks(str(audited_set)), GenerateConfig(tasks=str(audited_set), model="scripted:x"))
    assert [t.id for t in plan.selected] == ["clean"]
    assert plan.skipped == {"constant": "audit failed: task-constant-output, task-mean-output-passes"}
    with monkeypatch.context() as patch:
        patch.setattr(audit_runner, "audit_tasks", refuse)
        res = runner.invoke(app, ["audit", str(audited_set), "--cached", "--json"])
        assert res.exit_code == 1, res.output  # the constant task fails, from its cached report
        lines = {r["task_id"]: r for r in map(json.loads, res.stdout.splitlines())}
        assert lines["clean"]["passed"] and not lines["constant"]["passed"]
        # An edited reference has no current entry: --cached names it, --reuse audits only it.
        reference = audited_set / "L1" / "clean" / "reference.py"
        reference.write_text(reference.read_text().replace("* 2.0", "* 3.0"))
        stale = runner.invoke(app, ["audit", str(audited_set), "--cached", "--id", "clean"])
        assert stale.exit_code == 1 and "no current cached audit of 1 task(s): clean" in stale.stderr
    reused = runner.invoke(app, ["audit", str(audited_set), "--reuse", "--jobs", "1"])
    assert reused.exit_code == 1 and "1/2 passed (1 from the cache)" in reused.stdout
    assert runner.invoke(app, ["audit", str(audited_set), "--cached", "--id", "clean"]).exit_code == 0


def test_cli_refuses_contradictory_options(tmp_path: Path) -> None:
    save_task_folder(make_task("clean", "torch.relu(x)"), tmp_path / "set")
    res = runner.invoke(app, ["audit", str(tmp_path / "set"), "--cached", "--reuse"])
    assert res.exit_code == 2 and "--cached and --reuse" in res.stderr
    bad = runner.invoke(app, ["audit", str(tmp_path / "set"), "--device", "tpu"])
    assert bad.exit_code == 2 and "--device" in bad.stderr


def test_every_module_the_worker_runs_is_in_the_key() -> None:
    # An edit to any module that decides a worker's findings must give another key: follow the worker's imports.
    import ast

    from kernelmosaic.tasks.audit import cache

    folder, todo, seen = Path(cache.__file__).parent, ["worker.py"], set()
    while todo:
        name = todo.pop()
        seen.add(name)
        for node in ast.walk(ast.parse((folder / name).read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("kernelmosaic.tasks.audit."):
                todo.append(node.module.rsplit(".", 1)[1] + ".py")
    assert seen == set(cache._AUDIT_CODE)


def test_a_report_from_before_audits_named_their_shapes_still_loads() -> None:
    old = {"schema": "kernelmosaic.audit/1", "task_id": "relu", "passed": True, "findings": [],
           "checks": ["task-loads"], "devices": ["cpu"], "reference_hash": "abc", "seconds": 1.0,
           "torch_version": "2.5.0"}
    assert AuditReport.model_validate(old).shapes == {}
