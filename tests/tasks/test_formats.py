"""KernelBench checkouts, Parquet and HF datasets: import and export round trips."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from kernelmosaic.tasks.errors import TaskFormatError
from kernelmosaic.tasks.schema import Task
from kernelmosaic.tasks.sources import export_tasks, load_tasks

from .conftest import make_reference


@pytest.fixture
def kernelbench_checkout(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    (root / "KernelBench" / "level1").mkdir(parents=True)
    (root / "KernelBench" / "level2").mkdir(parents=True)
    (root / "KernelBench" / "level1" / "19_ReLU.py").write_text(make_reference("torch.relu(x)"))
    (root / "KernelBench" / "level1" / "3_Sum_reduction.py").write_text(make_reference("x.sum(dim=1)"))
    (root / "KernelBench" / "level2" / "7_Gemm_Scale_Tanh.py").write_text(make_reference("torch.tanh(x * 2)"))
    (root / "KernelBench" / "level1" / "helpers.py").write_text("# not a problem\n")
    return root


def _rows(tasks: list[Task]) -> list[tuple]:
    return sorted((t.level, t.provenance.problem_id, t.provenance.original_name, t.hashes.reference) for t in tasks)


def test_kernelbench_checkout_is_read_in_place(kernelbench_checkout: Path) -> None:
    tasks = load_tasks(f"kernelbench:{kernelbench_checkout}")
    assert [(t.id, t.level, t.category, t.provenance.problem_id) for t in tasks] == [
        ("kb_l1_3_sum_reduction", 1, "reduction", 3), ("kb_l1_19_relu", 1, "activation", 19),
        ("kb_l2_7_gemm_scale_tanh", 2, "fused", 7)]
    assert tasks[1].provenance.original_name == "19_ReLU"
    assert tasks[1].origin == str(kernelbench_checkout / "KernelBench" / "level1" / "19_ReLU.py")


def test_kernelbench_round_trip_through_every_format(kernelbench_checkout: Path, tmp_path: Path) -> None:
    original = load_tasks(f"kernelbench:{kernelbench_checkout}")
    out = export_tasks(original, "kernelbench", tmp_path / "kb_out")
    assert (out / "KernelBench" / "level1" / "19_ReLU.py").read_text() == \
        (kernelbench_checkout / "KernelBench" / "level1" / "19_ReLU.py").read_text()
    assert (out / "README.md").is_file()
    assert _rows(load_tasks(f"kernelbench:{out}")) == _rows(original)

    hf = export_tasks(original, "kernelbench-hf", tmp_path / "kb_hf")
    table = pq.read_table(next((hf / "data").glob("*.parquet")))
    assert table.column_names == ["code", "level", "name", "problem_id"]
    assert _rows(load_tasks(str(hf))) == _rows(original)

    own = export_tasks(original, "parquet", tmp_path / "own")
    again = load_tasks(str(own))
    assert [t.to_dict() for t in again] == [t.to_dict() for t in original]

    folders = export_tasks(again, "folder", tmp_path / "folders")
    by_id = {t.id: t.to_dict() for t in original}
    assert {t.id: t.to_dict() for t in load_tasks(str(folders))} == by_id


def test_parquet_round_trip_of_own_tasks_and_card(relu_task: Task, tmp_path: Path) -> None:
    out = export_tasks([relu_task], "parquet", tmp_path / "ds", name="Fixture set")
    (loaded,) = load_tasks(str(out / "data" / "train-00000-of-00001.parquet"))
    assert loaded.to_dict() == relu_task.to_dict()
    card = (out / "README.md").read_text()
    assert "# Fixture set" in card and "with a math spec: 1" in card and "path: data/*.parquet" in card


def test_exported_parquet_loads_with_hf_datasets(relu_task: Task, tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    out = export_tasks([relu_task], "parquet", tmp_path / "ds")
    ds = datasets.load_dataset("parquet", data_files=str(out / "data" / "*.parquet"), split="train")
    assert ds[0]["id"] == "relu" and ds[0]["reference_hash"] == relu_task.hashes.reference


def test_hf_source_reads_a_dataset_in_kernelbench_schema(kernelbench_checkout: Path, tmp_path: Path) -> None:
    pytest.importorskip("datasets")
    original = load_tasks(f"kernelbench:{kernelbench_checkout}")
    out = export_tasks(original, "kernelbench-hf", tmp_path / "hub")
    # A local folder stands in for a hub repository: `datasets.load_dataset` treats both alike.
    assert _rows(load_tasks(f"hf:{out}")) == _rows(original)


def test_edited_parquet_row_is_detected(relu_task: Task, tmp_path: Path) -> None:
    import pyarrow as pa

    out = export_tasks([relu_task], "parquet", tmp_path / "ds")
    file = out / "data" / "train-00000-of-00001.parquet"
    table = pq.read_table(file)
    table = table.set_column(table.column_names.index("reference"), "reference",
                             pa.array([relu_task.forms.reference.replace("relu", "gelu")]))
    pq.write_table(table, file)
    with pytest.raises(TaskFormatError, match=r"#row0: reference_hash does not match"):
        load_tasks(str(file))


def test_unknown_source_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(TaskFormatError, match="no such task source"):
        load_tasks(str(tmp_path / "nope"))
    with pytest.raises(TaskFormatError, match="not a KernelBench checkout"):
        load_tasks(f"kernelbench:{tmp_path}")
