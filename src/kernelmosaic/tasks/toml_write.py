"""Writing `task.toml` by hand: the stdlib reads TOML but does not write it, and our layout is small and fixed."""

from __future__ import annotations

import json
import math

__all__ = ["dumps_task_toml", "toml_value"]


def toml_value(value: object) -> str:
    """One TOML value: strings, numbers, booleans, lists and inline tables."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"cannot write non-finite number {value!r} to TOML")
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_key(k)} = {toml_value(v)}" for k, v in value.items()) + " }" if value else "{}"
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


def _key(key: str) -> str:
    return key if key.replace("_", "").replace("-", "").isalnum() else _string(key)


def _string(text: str) -> str:
    # Multi-line literal strings keep prose readable; fall back to JSON-style basic strings when unsafe.
    if "\n" in text and "'''" not in text and not text.endswith("'"):
        return "'''\n" + text + "'''"
    return json.dumps(text, ensure_ascii=False)


def dumps_task_toml(top: dict, tables: dict[str, dict]) -> str:
    """`top` holds root keys in order; `tables` maps a table name to its keys (empty tables are skipped)."""
    lines = [f"{_key(k)} = {toml_value(v)}" for k, v in top.items()]
    for name, body in tables.items():
        if not body:
            continue
        lines += ["", f"[{name}]"] + [f"{_key(k)} = {toml_value(v)}" for k, v in body.items()]
    return "\n".join(lines) + "\n"
