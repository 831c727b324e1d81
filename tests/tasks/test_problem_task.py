"""A problem file is recognised as a task's reference by its folder or by its text, up to comments and spacing."""

from __future__ import annotations

from pathlib import Path

from kernelmosaic.tasks.folder import save_task_folder
from kernelmosaic.tasks.problem_task import task_of_problem
from kernelmosaic.tasks.schema import Task
from kernelmosaic.tasks.sources import BUILTIN_DIR


def test_a_bundled_reference_is_found_by_its_text(tmp_path: Path) -> None:
    reference = (BUILTIN_DIR / "L1" / "l1_relu" / "reference.py").read_text()
    copy = tmp_path / "problem.py"
    copy.write_text("# saved from `tasks show`\n" + reference.replace("\n\n", "\n\n\n"))
    found = task_of_problem(copy)
    assert found is not None and (found.task.id, found.how) == ("l1_relu", "bundled task")
    assert found.task.shapes.small
    copy.write_text(reference.replace("F.relu(x)", "F.relu(x) * 2"))
    assert task_of_problem(copy) is None, "an edited reference is no longer the task's"


def test_a_task_folder_reference_is_found_by_its_folder(tmp_path: Path, relu_task: Task) -> None:
    folder = save_task_folder(relu_task, tmp_path)
    found = task_of_problem(folder / "reference.py")
    assert found is not None and (found.task.id, found.how) == (relu_task.id, "task folder")
