"""Reading an exported variant for training, and its lengths in tokens as the training template renders them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["load_rows", "length_report", "TRAIN_COLUMNS"]

TRAIN_COLUMNS = ("messages", "tools")


def load_rows(path: str) -> Any:
    """The `messages` and `tools` columns of a `load_from_disk` folder or a Parquet file; errors name the path."""
    import datasets

    where = Path(path)
    try:
        if where.is_dir():
            rows = datasets.load_from_disk(str(where))
        elif where.suffix == ".parquet" and where.is_file():
            rows = datasets.load_dataset("parquet", data_files=str(where), split="train")
        else:
            raise ValueError("not a load_from_disk folder or a .parquet file")
    except (OSError, ValueError, FileNotFoundError) as exc:
        raise ValueError(f"dataset {path}: cannot load: {exc}") from None
    if isinstance(rows, datasets.DatasetDict):
        raise ValueError(f"dataset {path}: holds several splits ({', '.join(rows)}); give one variant's folder")
    missing = [c for c in TRAIN_COLUMNS if c not in rows.column_names]
    if missing:
        raise ValueError(f"dataset {path}: no {', '.join(missing)} column (is it a `kernelmosaic sft export` variant?)")
    if len(rows) == 0:
        raise ValueError(f"dataset {path}: no rows")
    return rows.select_columns(list(TRAIN_COLUMNS))


def length_report(rows: Any, tokenizer: Any, template: str) -> list[int]:
    """Tokens of each row under the template training renders with (TRL's patched variant where it patches)."""
    chat_template = None
    if template == "trl_patched":
        from trl.chat_template_utils import get_training_chat_template

        chat_template = get_training_chat_template(tokenizer)
    lengths = []
    for row in rows:
        ids = tokenizer.apply_chat_template(row["messages"], tools=row["tools"] or None, chat_template=chat_template,
                                            tokenize=True, return_dict=True)["input_ids"]
        lengths.append(len(ids))
    return lengths
