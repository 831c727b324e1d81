"""Task sources by name: `builtin`, a folder of task folders, a Parquet file or exported dataset folder,
`kernelbench:PATH` (a checkout read in place) and `hf:NAME[:SPLIT]` (a Hugging Face dataset); and exports.
"""

from __future__ import annotations

from pathlib import Path

from kernelmosaic.tasks.card import dataset_card
from kernelmosaic.tasks.errors import TaskFormatError
from kernelmosaic.tasks.folder import BUILTIN_DIR, find_task_folders, load_task_folder, save_task_folder
from kernelmosaic.tasks.formats.kernelbench import kernelbench_root, read_kernelbench, write_kernelbench
from kernelmosaic.tasks.formats.parquet import read_parquet, tasks_from_rows, write_parquet
from kernelmosaic.tasks.schema import Task

__all__ = ["BUILTIN_DIR", "EXPORT_FORMATS", "load_tasks", "load_tasks_lenient", "export_tasks", "describe_source"]

EXPORT_FORMATS = ("folder", "parquet", "hf", "kernelbench", "kernelbench-hf")


def describe_source(source: str) -> str:
    """What kind of source `source` names: builtin, folder, task-folder, parquet, kernelbench or hf."""
    if source == "builtin":
        return "builtin"
    if source.startswith("kernelbench:"):
        return "kernelbench"
    if source.startswith("hf:"):
        return "hf"
    path = Path(source)
    if path.suffix == ".parquet":
        return "parquet"
    if (path / "task.toml").is_file():
        return "task-folder"
    if path.is_dir():
        if find_task_folders(path):
            return "folder"
        try:
            kernelbench_root(path)
            return "kernelbench"
        except TaskFormatError:
            pass
        if any(path.rglob("*.parquet")):
            return "parquet"
        raise TaskFormatError(path, "holds no task.toml, KernelBench levels or .parquet files")
    raise TaskFormatError(source, "no such task source (use builtin, a folder, a .parquet file, "
                                  "kernelbench:PATH or hf:NAME)")


def _folders(source: str) -> list[Path]:
    kind = describe_source(source)
    root = BUILTIN_DIR if kind == "builtin" else Path(source)
    if kind == "task-folder":
        return [root]
    if kind == "builtin" and not root.is_dir():
        raise TaskFormatError(root, "the builtin task set is missing from this installation")
    return find_task_folders(root)


def load_tasks_lenient(source: str) -> tuple[list[Task], list[TaskFormatError]]:
    """Every task that loads, plus an error per task folder that does not (for `validate`)."""
    if describe_source(source) not in ("builtin", "folder", "task-folder"):
        return load_tasks(source), []
    tasks, errors = [], []
    for folder in _folders(source):
        try:
            tasks.append(load_task_folder(folder))
        except TaskFormatError as exc:
            errors.append(exc)
    return tasks, errors


def load_tasks(source: str) -> list[Task]:
    """All tasks of a source; raises `TaskFormatError` (file, line, problem) on the first malformed task."""
    kind = describe_source(source)
    if kind in ("builtin", "folder", "task-folder"):
        return [load_task_folder(f) for f in _folders(source)]
    if kind == "parquet":
        return read_parquet(source)
    if kind == "kernelbench":
        return read_kernelbench(source.removeprefix("kernelbench:"))
    return _load_hf(source.removeprefix("hf:"))


def _load_hf(spec: str) -> list[Task]:
    import datasets  # optional dependency; imported only for hf: sources

    name, _, split = spec.partition(":")
    try:
        loaded = datasets.load_dataset(name, split=split or None)
    except Exception as exc:  # noqa: BLE001 - datasets raises many kinds (network, missing split, format)
        raise TaskFormatError(f"hf:{spec}", f"cannot load the dataset: {type(exc).__name__}: {exc}") from None
    parts = loaded.items() if isinstance(loaded, datasets.DatasetDict) else [(split or "train", loaded)]
    tasks: list[Task] = []
    for part, table in parts:
        tasks += tasks_from_rows(table.to_list(), f"hf:{name}:{part}")
    return tasks


def export_tasks(tasks: list[Task], fmt: str, out: str | Path, name: str = "KernelMosaic tasks") -> Path:
    """Write `tasks` to `out` in `fmt` (see `EXPORT_FORMATS`) with a dataset card; returns `out`."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    glob = ""
    if fmt == "folder":
        for task in tasks:
            save_task_folder(task, out)
    elif fmt in ("parquet", "hf", "kernelbench-hf"):
        # `hf` is the same hub-ready layout: data/*.parquet + a card with `configs`, pushable as is.
        schema = "kernelbench" if fmt == "kernelbench-hf" else "kernelmosaic"
        write_parquet(tasks, out / "data" / "train-00000-of-00001.parquet", schema)
        glob = "data/*.parquet"
    elif fmt == "kernelbench":
        write_kernelbench(tasks, out)
    else:
        raise ValueError(f"unknown export format {fmt!r} (known: {', '.join(EXPORT_FORMATS)})")
    (out / "README.md").write_text(dataset_card(tasks, name, glob, fmt), encoding="utf-8")
    return out
