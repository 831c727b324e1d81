"""`kernelmosaic tasks ...` commands on small fixture sets."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kernelmosaic.tasks.cli import app
from kernelmosaic.tasks.folder import save_task_folder
from kernelmosaic.tasks.schema import Task
from kernelmosaic.tasks.sources import load_tasks

runner = CliRunner()


def test_list_show_export_import(tmp_path: Path, relu_task: Task) -> None:
    save_task_folder(relu_task, tmp_path / "set")
    listed = runner.invoke(app, ["list", str(tmp_path / "set")], env={"COLUMNS": "140"})
    assert listed.exit_code == 0, listed.output
    assert "relu" in listed.output and "nl+ref+spec" in listed.output
    shown = runner.invoke(app, ["show", str(tmp_path / "set"), "relu", "--form", "spec"])
    assert shown.exit_code == 0 and shown.output.startswith("dim batch_size, dim")
    exported = runner.invoke(app, ["export", str(tmp_path / "set"), "--format", "parquet", "--out",
                                   str(tmp_path / "pq")])
    assert exported.exit_code == 0, exported.output
    imported = runner.invoke(app, ["import", str(tmp_path / "pq"), "--out", str(tmp_path / "back")])
    assert imported.exit_code == 0, imported.output
    assert (tmp_path / "back" / "L1" / "relu" / "spec.km").read_text() == relu_task.forms.spec


def test_validate_fails_with_located_errors_and_exit_code(tmp_path: Path, relu_task: Task) -> None:
    folder = save_task_folder(relu_task, tmp_path)
    (folder / "spec.km").write_text("dim batch_size, dim\ninput x: f32[batch_size, dim]\noutput y[b] = x[b, 1]\n")
    result = runner.invoke(app, ["validate", str(tmp_path), "--no-audit"])
    assert result.exit_code == 1
    assert "spec.km:3:20: an index is a variable or the literal 0" in result.output.replace("\n", "")


def test_unreadable_source_exits_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["list", str(tmp_path / "missing")])
    assert result.exit_code == 2


def test_synth_writes_tasks_that_validate(tmp_path: Path) -> None:
    result = runner.invoke(app, ["synth", "--n", "6", "--seed", "5", "--out", str(tmp_path), "--no-audit"])
    assert result.exit_code == 0, result.output
    assert "wrote 6 tasks" in result.output and (tmp_path / "README.md").is_file()
    checked = runner.invoke(app, ["validate", str(tmp_path), "--no-audit"])
    assert checked.exit_code == 0, checked.output


def test_audit_streams_json_lines_and_never_writes_into_the_package(tmp_path: Path, relu_task: Task) -> None:
    import json

    import kernelmosaic

    builtin = Path(kernelmosaic.__file__).resolve().parent / "tasks" / "builtin" / "L1" / "l1_relu"
    assert not (builtin / "audit.json").exists()
    folder = save_task_folder(relu_task, tmp_path / "set")
    for source, task_id in (("builtin", "l1_relu"), (str(tmp_path / "set"), "relu")):
        res = runner.invoke(app, ["audit", source, "--id", task_id, "--write", "--json", "--jobs", "1"])
        assert res.exit_code == 0, res.output
        lines = [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]
        assert [(r["task_id"], r["passed"]) for r in lines] == [(task_id, True)]
        assert all(c.startswith("task-") for c in lines[0]["checks"])
    assert not (builtin / "audit.json").exists()
    assert json.loads((folder / "audit.json").read_text())["task_id"] == "relu"


def test_show_takes_a_bare_task_id_and_refuses_an_unknown_form() -> None:
    shown = runner.invoke(app, ["show", "l1_relu", "--form", "reference"])
    assert shown.exit_code == 0, shown.output
    assert "class Model" in shown.stdout and "F.relu" in shown.stdout
    bogus = runner.invoke(app, ["show", "l1_relu", "--form", "bogus"])
    assert bogus.exit_code == 2 and bogus.stdout == ""
    assert "'--form'" in bogus.stderr and "'reference'" in bogus.stderr and "'json'" in bogus.stderr
    missing = runner.invoke(app, ["show", "l1_no_such_task"])
    assert missing.exit_code == 2 and "l1_no_such_task" in missing.stderr
    without_spec = next(t.id for t in load_tasks("builtin") if not t.has_spec)
    no_spec = runner.invoke(app, ["show", without_spec, "--form", "spec"])
    assert no_spec.exit_code == 2 and no_spec.stdout == "" and "no math spec" in no_spec.stderr


def test_audit_of_an_unknown_id_is_an_error_naming_it(tmp_path: Path, relu_task: Task) -> None:
    save_task_folder(relu_task, tmp_path / "set")
    result = runner.invoke(app, ["audit", str(tmp_path / "set"), "--id", "relu", "--id", "no_such_id"])
    assert result.exit_code == 2 and "no_such_id" in result.stderr and "passed" not in result.output


def test_list_keeps_every_id_whole_at_80_columns() -> None:
    """Ids and categories never wrap inside a word (an id split in two reads as two ids); only titles wrap, and the
    columns that give way below 110 columns come back on a wide terminal."""
    listed = runner.invoke(app, ["list", "builtin", "--level", "2"], env={"COLUMNS": "80"})
    assert listed.exit_code == 0, listed.output
    assert "…" not in listed.stdout and max(len(line) for line in listed.stdout.splitlines()) <= 80
    ids = [json.loads(line)["id"] for line in
           runner.invoke(app, ["list", "builtin", "--level", "2", "--json"]).stdout.splitlines()]
    words = set(listed.stdout.split())
    assert ids and all(i in words for i in ids), [i for i in ids if i not in words][:5]
    assert "approved" in listed.stdout and "dtype, forms and audit" in listed.stdout
    wide = runner.invoke(app, ["list", "builtin", "--level", "2"], env={"COLUMNS": "140"})
    assert "nl+ref+spec" in wide.stdout and "dtype, forms and audit" not in wide.stdout
