"""Parquet tables of tasks: the project's own columns (lossless) and KernelBench's HF schema.

Nested parts (shapes, provenance, review, audit) are JSON strings so the table schema stays flat and stable.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import ValidationError

from kernelmosaic.tasks.errors import TaskFormatError
from kernelmosaic.tasks.formats.kernelbench import kernelbench_rows, task_from_kernelbench
from kernelmosaic.tasks.schema import AuditReport, Forms, Provenance, Review, Shapes, Task

__all__ = ["task_rows", "tasks_from_rows", "write_parquet", "read_parquet", "KERNELBENCH_COLUMNS", "OWN_COLUMNS"]

KERNELBENCH_COLUMNS = ("code", "level", "name", "problem_id")
OWN_COLUMNS = ("schema", "id", "title", "level", "category", "tags", "dtype", "nl", "reference", "spec",
               "shapes", "provenance", "review", "audit", "reference_hash", "spec_hash")


def task_rows(tasks: list[Task]) -> list[dict]:
    rows = []
    for task in tasks:
        data = task.to_dict()
        rows.append({
            "schema": data["schema"], "id": task.id, "title": task.title, "level": task.level,
            "category": task.category, "tags": list(task.tags), "dtype": task.dtype, "nl": task.forms.nl,
            "reference": task.forms.reference, "spec": task.forms.spec,
            "shapes": json.dumps(data["shapes"]), "provenance": json.dumps(data["provenance"]),
            "review": json.dumps(data["review"]), "audit": json.dumps(data["audit"]) if task.audit else "",
            "reference_hash": task.hashes.reference, "spec_hash": task.hashes.spec,
        })
    return rows


def tasks_from_rows(rows: list[dict], origin: str) -> list[Task]:
    """Tasks from rows of either schema; errors name `origin#row`."""
    tasks = []
    for i, row in enumerate(rows):
        where = f"{origin}#row{i}"
        try:
            if "reference" not in row and all(c in row for c in KERNELBENCH_COLUMNS):
                tasks.append(task_from_kernelbench(row["code"], int(row["level"]), str(row["name"]),
                                                   int(row["problem_id"]), where))
                continue
            missing = [c for c in OWN_COLUMNS if c not in row]
            if missing:
                raise TaskFormatError(where, f"missing column(s) {', '.join(missing)}; expected the kernelmosaic "
                                      f"columns or KernelBench's ({', '.join(KERNELBENCH_COLUMNS)})")
            task = Task(schema=row["schema"], id=row["id"], title=row["title"], level=row["level"],
                        category=row["category"], tags=list(row["tags"] or []), dtype=row["dtype"],
                        forms=Forms(nl=row["nl"], reference=row["reference"], spec=row["spec"] or ""),
                        shapes=Shapes(**json.loads(row["shapes"])),
                        provenance=Provenance(**json.loads(row["provenance"])),
                        review=Review(**json.loads(row["review"])),
                        audit=AuditReport.model_validate_json(row["audit"]) if row["audit"] else None,
                        origin=where)
        except (ValidationError, ValueError, TypeError) as exc:
            if isinstance(exc, TaskFormatError):
                raise
            detail = exc.errors()[0] if isinstance(exc, ValidationError) else None
            msg = f"{'.'.join(map(str, detail['loc']))}: {detail['msg']}" if detail else str(exc)
            raise TaskFormatError(where, f"invalid task row: {msg}") from None
        if row.get("reference_hash") and row["reference_hash"] != task.hashes.reference:
            raise TaskFormatError(where, "reference_hash does not match the reference text (edited by hand?)")
        tasks.append(task)
    return tasks


def write_parquet(tasks: list[Task], path: str | Path, schema: str = "kernelmosaic") -> Path:
    """Write one Parquet file with the own columns (`kernelmosaic`) or KernelBench's (`kernelbench`)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = task_rows(tasks) if schema == "kernelmosaic" else kernelbench_rows(tasks)
    columns = OWN_COLUMNS if schema == "kernelmosaic" else KERNELBENCH_COLUMNS
    table = pa.Table.from_pylist(rows, schema=_arrow_schema(columns)) if rows else _arrow_schema(columns).empty_table()
    pq.write_table(table, path)
    return path


def _arrow_schema(columns: tuple[str, ...]) -> pa.Schema:
    types = {"level": pa.int64(), "problem_id": pa.int64(), "tags": pa.list_(pa.string())}
    return pa.schema([(c, types.get(c, pa.string())) for c in columns])


def read_parquet(path: str | Path) -> list[Task]:
    """Tasks from a Parquet file, or from every `*.parquet` under a folder (an exported dataset)."""
    path = Path(path)
    files = sorted(path.rglob("*.parquet")) if path.is_dir() else [path]
    if not files:
        raise TaskFormatError(path, "no .parquet files here")
    tasks: list[Task] = []
    for file in files:
        try:
            rows = pq.read_table(file).to_pylist()
        except (OSError, pa.ArrowException) as exc:
            raise TaskFormatError(file, f"cannot read Parquet: {exc}") from None
        tasks += tasks_from_rows(rows, str(file))
    return tasks
