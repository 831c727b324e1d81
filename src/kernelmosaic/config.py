"""One configuration mechanism: a TOML file whose sections feed each stage's typed config, plus `--set` overrides.

`kernelmosaic.toml` in the working directory is read when present (or `--config FILE`); each command takes the
sections it needs (`[verify]`, `[model]`, `[generate]`, ...) and validates them with its own pydantic model, so
every field keeps its docstring and type. `--set verify.trials=3` overrides one value (TOML syntax; bare words
are strings). Explicit command-line flags win over both. Errors name the file, the key and what is allowed.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Literal, TypeVar, get_args, get_origin

from pydantic import BaseModel, ValidationError

from kernelmosaic.paths import CONFIG_FILE

__all__ = ["DEFAULT_FILE", "WORKDIR", "ConfigError", "read_config", "build", "describe_error", "describe_fields"]

DEFAULT_FILE = CONFIG_FILE
WORKDIR: ContextVar[Path | None] = ContextVar("kernelmosaic_workdir", default=None)
"""The directory a command runs for, where it is not this process's (the verifier service running a client's
`verify`, `verify/forwarded.py`): `read_config` looks for ./kernelmosaic.toml there."""
M = TypeVar("M", bound=BaseModel)


class ConfigError(ValueError):
    """A configuration file or override that cannot be used; the message names where and why."""


def _parse_value(text: str) -> Any:
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text  # a bare word: a string


def _set(tree: dict[str, Any], dotted: str, value: Any, where: str) -> None:
    keys = dotted.split(".")
    node = tree
    for key in keys[:-1]:
        child = node.setdefault(key, {})
        if not isinstance(child, dict):
            raise ConfigError(f"{where}: `{dotted}`: `{key}` is a value, not a section")
        node = child
    node[keys[-1]] = value


def read_config(path: Path | None = None, sets: Sequence[str] = (), cwd: Path | None = None) -> dict[str, Any]:
    """The merged tree: the file (`path`, else ./kernelmosaic.toml when present), then each `--set key=value`."""
    tree: dict[str, Any] = {}
    cwd = cwd or WORKDIR.get()
    if path is None and (Path(cwd or ".") / DEFAULT_FILE).is_file():
        path = Path(cwd or ".") / DEFAULT_FILE
    if path is not None:
        try:
            tree = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfigError(f"config file {path}: cannot read: {exc.strerror or exc}") from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"config file {path}: not valid TOML: {exc}") from None
        tree["__file__"] = str(path)
    for item in sets:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--set {item!r}: expected SECTION.KEY=VALUE, e.g. --set verify.trials=3")
        _set(tree, key.strip(), _parse_value(value.strip()), "--set")
    return tree


def _allowed(model: type[BaseModel], loc: tuple[Any, ...]) -> str:
    field = model.model_fields.get(str(loc[0])) if loc else None
    if field is None:
        return f" (known keys: {', '.join(sorted(model.model_fields))})"
    annotation = field.annotation
    options = [a for a in get_args(annotation) if get_origin(a) is Literal] or ([annotation] if get_origin(annotation) is Literal else [])
    values = [repr(v) for option in options for v in get_args(option)]
    return f" (allowed: {', '.join(values)})" if values else ""


def _merge(into: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """Deep merge: sections merge key by key; a None in `over` means "not given" and changes nothing."""
    out = dict(into)
    for key, value in over.items():
        if value is None:
            continue
        if isinstance(value, Mapping):
            base = out.get(key)
            merged = _merge(dict(base) if isinstance(base, Mapping) else {}, value)
            if merged or isinstance(base, Mapping):
                out[key] = merged
        else:
            out[key] = value
    return out


def build(model: type[M], tree: Mapping[str, Any], section: str, base: Mapping[str, Any] | None = None,
          flags: Mapping[str, Any] | None = None) -> M:
    """`model` from `base` values, then the file's `[section]`, then explicit `flags` (deep-merged; None = not given).

    A dotted `section` (`sft.train`) is a table inside a table, as TOML writes `[sft.train]`.
    """
    given: Any = tree
    for key in section.split("."):
        given = given.get(key, {})
        if not isinstance(given, dict):
            raise ConfigError(f"{tree.get('__file__', 'config')}: `{section}` must be a section ([{section}])")
    values = _merge(_merge(dict(base or {}), given), flags or {})
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        raise ConfigError(describe_error(exc, model, section, tree.get("__file__", "--set / options"))) from None


def describe_error(exc: ValidationError, model: type[BaseModel], section: str, where: str) -> str:
    """The first error of validating `model` from `[section]` of `where` (a file, or `--set / options`): the key,
    what was wrong, the value given, and the allowed values or known keys."""
    first = exc.errors()[0]
    loc = tuple(first["loc"])
    key = ".".join(str(part) for part in loc)
    return f"{where}: [{section}] {key}: {first['msg']} (got {first.get('input')!r}){_allowed(model, loc)}"


def describe_fields(model: type[BaseModel]) -> list[tuple[str, str, str]]:
    """(name, default, docstring) of every field, for `docs/configuration.md` and `--help` texts."""
    rows = []
    for name, field in model.model_fields.items():
        default = "(computed)" if field.default_factory is not None else repr(field.default)
        rows.append((name, default, (field.description or "").replace("\n", " ")))
    return rows
