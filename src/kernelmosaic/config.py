"""One configuration mechanism: a TOML file whose sections feed each stage's typed config, plus `--set` overrides.

`kernelmosaic.toml` in the working directory is read when present (or `--config FILE`); each command takes the
sections it needs (`[verify]`, `[model]`, `[generate]`, ...) and validates them with its own pydantic model, so
every field keeps its docstring and type. `--set verify.trials=3` overrides one value (TOML syntax; bare words
are strings). Explicit command-line flags win over both. Errors name the file, the key and what is allowed.

Every command checks the whole file and each `--set` against one schema (`SECTIONS`) when it reads them: an
unknown section or key is refused with the nearest known name, whichever command runs, because one file feeds
every command and a misspelt key would otherwise be silently ignored by the commands that do not read it.
"""

from __future__ import annotations

import difflib
import importlib
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Literal, TypeVar, get_args, get_origin

from pydantic import BaseModel, ValidationError

from kernelmosaic.paths import CONFIG_FILE

__all__ = ["DEFAULT_FILE", "SECTIONS", "WORKDIR", "ConfigError", "read_config", "build", "describe_error",
           "describe_fields"]

DEFAULT_FILE = CONFIG_FILE
WORKDIR: ContextVar[Path | None] = ContextVar("kernelmosaic_workdir", default=None)
"""The directory a command runs for, where it is not this process's (the verifier service running a client's
`verify`, `verify/forwarded.py`): `read_config` looks for ./kernelmosaic.toml there."""
M = TypeVar("M", bound=BaseModel)

SECTIONS: dict[str, str] = {
    "verify": "kernelmosaic.verify.config:VerifyConfig",
    "generate": "kernelmosaic.agent.runner:GenerateConfig",
    "model": "",  # the backend's own options: the backend named by --model checks them (models/registry.py)
    "scale": "kernelmosaic.verify.ray.config:ScaleConfig",
    "select": "kernelmosaic.curate.select:SelectConfig",
    "sft.export": "kernelmosaic.sft.config:ExportConfig",
    "sft.train": "kernelmosaic.sft.train_config:TrainConfig",
    "review": "kernelmosaic.curate.review.app:ServeConfig",
}
"""Every section of the settings file and the typed model its keys are checked against ("module:Class", imported
only when the section is present, so a command pays for the sections it is given)."""
_RENAMED = {"export": "sft.export", "train": "sft.train"}
"""Tables that moved into a section of their own; a file that still has them is told the new name."""


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


def _schema() -> dict[str, Any]:
    """`SECTIONS` as a tree of tables: `{"sft": {"export": "module:Class", ...}, "verify": "module:Class", ...}`."""
    root: dict[str, Any] = {}
    for dotted, target in SECTIONS.items():
        *parents, last = dotted.split(".")
        node = root
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = target
    return root


def _nested_model(annotation: Any) -> type[BaseModel] | None:
    """The model a field holds (`Budgets`, `Budgets | None`), whose keys are checked too; None for plain values."""
    for option in (annotation, *get_args(annotation)):
        if isinstance(option, type) and issubclass(option, BaseModel):
            return option
    return None


def _unknown(kind: str, name: str, known: Iterable[str], where: str, path: Sequence[str],
             reads: Sequence[str] | None = None) -> ConfigError:
    """An unknown section or key: the nearest known name; for a section, what the command reads (`reads`, every
    section at that level when not given): the file may hold other commands' sections, which are no help here."""
    known = sorted(known)
    near = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    full = ".".join([*path, name])
    if kind == "section":
        moved = _RENAMED.get(full)
        if moved:
            return ConfigError(f"{where}: the [{full}] table is now [{moved}] (one file feeds every command): "
                               f"rename [{full}] to [{moved}] and [{full}.X] to [{moved}.X]")
        hint = f" (did you mean [{'.'.join([*path, near[0]])}]?)" if near else ""
        if reads is None:
            return ConfigError(f"{where}: unknown section [{full}]{hint}; known sections here: "
                               + ", ".join(f"[{'.'.join([*path, k])}]" for k in known))
        read = ", ".join(f"[{r}]" for r in reads) or "no section"
        return ConfigError(f"{where}: unknown section [{full}]{hint}; this command reads {read}")
    inside = f" in [{'.'.join(path)}]" if path else ""
    hint = f" (did you mean `{near[0]}`?)" if near else ""
    return ConfigError(f"{where}: unknown key `{name}`{inside}{hint}; known keys: {', '.join(known)}")


def _check(node: Mapping[str, Any], schema: Mapping[str, Any] | str | type[BaseModel], where: str,
           path: tuple[str, ...] = (), reads: Sequence[str] | None = None) -> None:
    """Every key of `node` is one `schema` knows (a table of sections, a "module:Class", or a model's fields)."""
    if isinstance(schema, str):
        if not schema:
            return  # [model]: the backend checks its own options
        module, _, name = schema.partition(":")
        schema = getattr(importlib.import_module(module), name)
    if isinstance(schema, type):
        fields = schema.model_fields
        names = {alias: name for name, f in fields.items() for alias in (name, f.alias) if alias}
        for key, value in node.items():
            if key not in names:
                raise _unknown("key", key, fields, where, path)
            inner = _nested_model(fields[names[key]].annotation)
            if inner is not None and isinstance(value, Mapping):
                _check(value, inner, where, (*path, key))
        return
    for key, value in node.items():
        if key == "__file__" and not path:
            continue
        if key not in schema:
            raise _unknown("section", key, schema, where, path, reads)
        if not isinstance(value, Mapping):
            dotted = ".".join((*path, key))
            raise ConfigError(f"{where}: `{dotted}` must be a section ([{dotted}] in the file, or --set {dotted}.KEY=VALUE)")
        _check(value, schema[key], where, (*path, key), reads)


def read_config(path: Path | None = None, sets: Sequence[str] = (), cwd: Path | None = None,
                reads: Sequence[str] | None = None) -> dict[str, Any]:
    """The merged tree: the file (`path`, else ./kernelmosaic.toml when present), then each `--set key=value`.

    The file and each `--set` are checked against `SECTIONS` (unknown sections and keys raise `ConfigError`
    naming the nearest known one). `reads`: the sections the command uses (`("verify", "scale")`); a `--set` of
    any other section would change nothing, so it is refused (the file may hold every command's sections)."""
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
        _check(tree, _schema(), str(path), reads=reads)
        tree["__file__"] = str(path)
    for item in sets:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ConfigError(f"--set {item!r}: expected SECTION.KEY=VALUE, e.g. --set verify.trials=3")
        if "." not in key:
            example = f"{reads[0]}.KEY=VALUE" if reads else "verify.trials=3"
            raise ConfigError(f"--set {item}: name the section, SECTION.KEY=VALUE (e.g. --set {example})")
        one: dict[str, Any] = {}
        _set(one, key, _parse_value(value.strip()), f"--set {item}")
        _check(one, _schema(), f"--set {item}", reads=reads)
        if reads is not None and not any(key.startswith(f"{section}.") for section in reads):
            raise ConfigError(f"--set {item}: this command reads " + ", ".join(f"[{r}]" for r in reads)
                              + f"; a setting of [{key.rpartition('.')[0] or key}] would change nothing here")
        _set(tree, key, _parse_value(value.strip()), "--set")
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
    if first["type"] == "extra_forbidden" and len(loc) == 1:  # an unknown key: the nearest known one, and the rest
        return str(_unknown("key", key, model.model_fields, where, tuple(section.split("."))))
    return f"{where}: [{section}] {key}: {first['msg']} (got {first.get('input')!r}){_allowed(model, loc)}"


def describe_fields(model: type[BaseModel]) -> list[tuple[str, str, str]]:
    """(name, default, docstring) of every field, for `docs/configuration.md` and `--help` texts."""
    rows = []
    for name, field in model.model_fields.items():
        default = "(computed)" if field.default_factory is not None else repr(field.default)
        rows.append((name, default, (field.description or "").replace("\n", " ")))
    return rows
