"""Task folders: round trip, and malformed files reported with file, line and problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelmosaic.tasks.errors import TaskFormatError
from kernelmosaic.tasks.folder import load_task_folder, save_task_folder
from kernelmosaic.tasks.schema import Task
from kernelmosaic.tasks.sources import load_tasks
from kernelmosaic.tasks.validate import Requirements, validate_tasks


def test_round_trip_keeps_every_field(tmp_path: Path, relu_task: Task) -> None:
    folder = save_task_folder(relu_task, tmp_path)
    assert folder == tmp_path / "L1" / "relu"
    loaded = load_task_folder(folder)
    assert loaded.to_dict() == relu_task.to_dict()
    assert loaded.origin == str(folder)
    assert [t.id for t in load_tasks(str(tmp_path))] == ["relu"]


def _write(tmp_path: Path, relu_task: Task, edit) -> Path:
    folder = save_task_folder(relu_task, tmp_path)
    toml = folder / "task.toml"
    toml.write_text(edit(toml.read_text()))
    return folder


def test_toml_syntax_error_names_file_and_line(tmp_path: Path, relu_task: Task) -> None:
    folder = _write(tmp_path, relu_task, lambda t: t.replace('level = 1', 'level = = 1'))
    with pytest.raises(TaskFormatError) as info:
        load_task_folder(folder)
    assert info.value.file == str(folder / "task.toml")
    assert info.value.line == 4
    assert str(info.value).startswith(f"{folder / 'task.toml'}:4:")


def test_bad_value_names_the_key_and_its_line(tmp_path: Path, relu_task: Task) -> None:
    folder = _write(tmp_path, relu_task, lambda t: t.replace('category = "activation"', 'category = "magic"'))
    with pytest.raises(TaskFormatError, match=r"task.toml:5: category: Input should be") as info:
        load_task_folder(folder)
    assert info.value.line == 5


def test_unknown_key_and_folder_mismatch(tmp_path: Path, relu_task: Task) -> None:
    folder = _write(tmp_path, relu_task, lambda t: "colour = 'red'\n" + t)
    with pytest.raises(TaskFormatError, match="task.toml:1: unknown key 'colour'"):
        load_task_folder(folder)
    folder = _write(tmp_path, relu_task, lambda t: t.replace('id = "relu"', 'id = "other"'))
    with pytest.raises(TaskFormatError, match="task.toml:2: id 'other' must equal the folder name 'relu'"):
        load_task_folder(folder)


def test_missing_reference_is_reported(tmp_path: Path, relu_task: Task) -> None:
    folder = save_task_folder(relu_task, tmp_path)
    (folder / "reference.py").unlink()
    with pytest.raises(TaskFormatError, match=r"reference.py: missing"):
        load_task_folder(folder)


def test_validate_reports_spec_and_shape_problems_with_locations(tmp_path: Path, relu_task: Task) -> None:
    broken = relu_task.model_copy(update={
        "forms": relu_task.forms.model_copy(update={"spec": "dim batch_size, dim\ninput x: f32[batch_size, dim]\n"
                                                            "output y[b, d] = relu(x[b, e])\n"}),
        "shapes": relu_task.shapes.model_copy(update={"small": {"batch_size": 2, "width": 3}})})
    folder = save_task_folder(broken, tmp_path)
    report = validate_tasks(str(tmp_path), [load_task_folder(folder)], [], Requirements(min_spec=2))
    text = [str(i) for i in report.issues]
    assert any(t.startswith(f"{folder / 'spec.km'}:3:28: index 'e'") for t in text), text
    assert any("shapes.small: no module-level constant named width" in t for t in text), text
    assert any("1 tasks with a spec, at least 2 required" in t for t in text), text
    assert not report.passed


def test_dumped_task_validates_again_and_stale_hash_is_refused(relu_task: Task) -> None:
    from pydantic import ValidationError

    data = relu_task.to_dict()
    assert Task.model_validate(data).to_dict() == data
    data["forms"]["reference"] += "\nextra = 1\n"
    with pytest.raises(ValidationError, match="hashes.reference does not match"):
        Task.model_validate(data)
    # Reformatting alone keeps the hash (comments and whitespace do not count).
    data["forms"]["reference"] = relu_task.forms.reference.replace("return ", "return  ") + "# note\n"
    assert Task.model_validate(data).hashes.reference == relu_task.hashes.reference
