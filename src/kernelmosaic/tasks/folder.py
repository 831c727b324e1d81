"""Task folders on disk: `task.toml` + `reference.py` (+ `spec.km`, + `audit.json`), human-editable."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from pydantic import ValidationError

from kernelmosaic.tasks.errors import TaskFormatError
from kernelmosaic.tasks.schema import TASK_SCHEMA, AuditReport, Forms, Task
from kernelmosaic.tasks.toml_write import dumps_task_toml

__all__ = ["BUILTIN_DIR", "load_task_folder", "save_task_folder", "find_task_folders", "TOML_KEYS"]

TOML_KEYS = ("schema", "id", "title", "level", "category", "tags", "dtype", "nl", "shapes", "provenance", "review")
_TOML_LOC = re.compile(r"\(at line (\d+), column (\d+)\)")
BUILTIN_DIR = Path(__file__).resolve().parent / "builtin"
"""The bundled seed task set: one task folder per task."""


def find_task_folders(root: Path) -> list[Path]:
    """Every folder under `root` holding a `task.toml`, sorted by path."""
    return sorted(p.parent for p in Path(root).rglob("task.toml"))


def _key_line(text: str, key: str) -> int:
    """Line of `key = ...` (or `[key]`) in a TOML text, 1-based; 1 when the key is absent (it is then missing)."""
    pattern = re.compile(rf"^\s*(\[{re.escape(key)}\]|{re.escape(key)}\s*=)", re.MULTILINE)
    match = pattern.search(text)
    return text.count("\n", 0, match.start()) + 1 if match else 1


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskFormatError(path, f"cannot read: {exc}") from None


def _read_toml(path: Path) -> tuple[dict, str]:
    text = _read_text(path)
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as exc:
        match = _TOML_LOC.search(str(exc))
        line, col = (int(match.group(1)), int(match.group(2))) if match else (0, 0)
        raise TaskFormatError(path, f"invalid TOML: {_TOML_LOC.sub('', str(exc)).strip()}", line, col) from None


def load_task_folder(folder: Path) -> Task:
    """Read one task folder; every problem is reported as `file:line: what` (a `TaskFormatError`)."""
    folder = Path(folder)
    toml_path = folder / "task.toml"
    data, text = _read_toml(toml_path)
    unknown = [k for k in data if k not in TOML_KEYS]
    if unknown:
        raise TaskFormatError(toml_path, f"unknown key '{unknown[0]}' (allowed: {', '.join(TOML_KEYS)})",
                              _key_line(text, unknown[0]))
    if data.get("schema") != TASK_SCHEMA:
        raise TaskFormatError(toml_path, f"schema must be \"{TASK_SCHEMA}\", got {data.get('schema')!r}",
                              _key_line(text, "schema"))
    ref_path = folder / "reference.py"
    if not ref_path.is_file():
        raise TaskFormatError(ref_path, "missing: every task needs a reference.py")
    reference = _read_text(ref_path)
    spec_path = folder / "spec.km"
    spec = _read_text(spec_path) if spec_path.is_file() else ""
    fields = {k: v for k, v in data.items() if k != "nl"}
    try:
        task = Task(forms=Forms(nl=data.get("nl", ""), reference=reference, spec=spec),
                    origin=str(folder), **fields)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = [str(p) for p in err["loc"]]
        key = loc[0] if loc else "schema"
        line = _key_line(text, loc[1] if key == "forms" and len(loc) > 1 else key)
        raise TaskFormatError(toml_path, f"{'.'.join(loc) or 'task'}: {err['msg']}", line) from None
    if not task.forms.nl.strip():
        raise TaskFormatError(toml_path, "nl: missing or empty natural-language description", _key_line(text, "nl"))
    if task.id != folder.name:
        raise TaskFormatError(toml_path, f"id '{task.id}' must equal the folder name '{folder.name}'",
                              _key_line(text, "id"))
    audit_path = folder / "audit.json"
    if audit_path.is_file():
        try:
            task.audit = AuditReport.model_validate_json(audit_path.read_text(encoding="utf-8"))
        except ValidationError as exc:
            raise TaskFormatError(audit_path, f"invalid audit report: {exc.errors()[0]['msg']}") from None
    return task


def save_task_folder(task: Task, parent: Path, level_dirs: bool = True) -> Path:
    """Write `task` under `parent` (in `L<level>/<id>/` when `level_dirs`) and return the folder."""
    folder = Path(parent) / (f"L{task.level}" if level_dirs else "") / task.id
    folder.mkdir(parents=True, exist_ok=True)
    data = task.model_dump(mode="json", by_alias=True, exclude={"forms", "audit", "hashes"})
    top = {k: data[k] for k in ("schema", "id", "title", "level", "category", "tags", "dtype")}
    top["nl"] = task.forms.nl
    prov = {k: v for k, v in data["provenance"].items() if v not in ("", None)}
    review = {k: v for k, v in data["review"].items() if v != ""}
    shapes = {k: v for k, v in data["shapes"].items() if v}
    text = dumps_task_toml(top, {"shapes": shapes, "provenance": prov, "review": review})
    (folder / "task.toml").write_text(text, encoding="utf-8")
    (folder / "reference.py").write_text(task.forms.reference, encoding="utf-8")
    spec_path = folder / "spec.km"
    if task.has_spec:
        spec_path.write_text(task.forms.spec, encoding="utf-8")
    elif spec_path.exists():
        spec_path.unlink()
    if task.audit is not None:
        (folder / "audit.json").write_text(task.audit.model_dump_json(by_alias=True, indent=2), encoding="utf-8")
    return folder
