"""Rows to disk: a `datasets.load_from_disk` folder and a Parquet file per variant.

Messages and tool schemas are stored as JSON values (`datasets.Json`): each message keeps exactly its own keys
and each call its own arguments, where a struct column would give every row every key (`"topic": null` in a
`write_candidate` call) and chat templates would render those nulls.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kernelmosaic.sft.metadata import EpisodeMeta

__all__ = ["META_COLUMNS", "features", "write_variant"]

_LISTS = {"forms", "failure_types"}
META_COLUMNS = [*EpisodeMeta.model_fields, "spec_source"]


def features() -> Any:
    import datasets

    columns: dict[str, Any] = {"messages": datasets.List(datasets.Json()), "tools": datasets.List(datasets.Json())}
    for name, info in EpisodeMeta.model_fields.items():
        kind = {int: "int64", float: "float64", bool: "bool"}.get(info.annotation, "string")
        columns[name] = datasets.List(datasets.Value("string")) if name in _LISTS else datasets.Value(kind)
    columns["spec_source"] = datasets.Value("string")
    return datasets.Features(columns)


def write_variant(rows: list[dict[str, Any]], folder: Path, parquet: Path) -> int:
    """Write the rows (one per episode) as a `load_from_disk` folder and a Parquet file; returns the row count."""
    import datasets

    table = datasets.Dataset.from_list(rows, features=features()) if rows else \
        datasets.Dataset.from_dict({k: [] for k in features()}, features=features())
    table.save_to_disk(str(folder))
    table.to_parquet(str(parquet))
    return len(table)
