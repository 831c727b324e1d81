"""Audit reports cached on disk per task content, so `generate` can gate on audits without running them.

An entry's key covers everything that decides an audit's outcome: the task's reference and spec hashes, its
precision and shape overrides (declared, and those the audit derives when there are none), the audit settings that
change what is checked, the rule registry, the audit code and torch's version. A change to any of them gives another
key, so a stale entry is never read. The device is recorded in the report, not in the key, and the machine's memory
budgets are in neither: only flags depend on them. Reports of timeouts and worker crashes are not stored (they are
retried). Parent side only: the worker never imports this module.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
from pathlib import Path

import torch
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kernelmosaic.contracts.task_rules import TASK_RULES
from kernelmosaic.paths import default_cache_dir, write_atomic
from kernelmosaic.tasks.audit.runner import AuditConfig, derived_shapes
from kernelmosaic.tasks.schema import AuditReport, Task

__all__ = ["CACHE_SCHEMA", "audit_cache_dir", "audit_key", "audit_failure", "cached_audit", "save_audit"]

log = logging.getLogger(__name__)
CACHE_SCHEMA = "kernelmosaic.audit-cache/1"
_NOT_CACHED = frozenset({"task-timeout", "task-worker-crash"})
# Settings that change what an audit checks; jobs, timeouts and devices do not change a pass or a fail.
_KEYED_SETTINGS = {"seeds", "max_elements", "max_default_gb", "shapes"}
_AUDIT_CODE = ("worker.py", "probes.py", "meta.py", "compare.py")


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_: str = Field(default=CACHE_SCHEMA, alias="schema")
    key: str
    report: AuditReport


def audit_cache_dir() -> Path:
    """`audits/` beside the verifier's build cache: `$KERNELMOSAIC_CACHE/../audits`, else
    `~/.cache/kernelmosaic/audits`."""
    return default_cache_dir().parent / "audits"


@functools.cache
def _code_hash() -> str:
    digest = hashlib.sha256()
    for name in _AUDIT_CODE:
        digest.update((Path(__file__).parent / name).read_bytes())
    digest.update(json.dumps([r.model_dump() for r in TASK_RULES.values()], sort_keys=True).encode())
    return digest.hexdigest()


def audit_key(task: Task, config: AuditConfig | None = None) -> str:
    """sha256 of what decides `task`'s audit under `config` (default settings when None)."""
    config = config or AuditConfig(jobs=1)
    hashes = task.hashes
    material = {"reference": hashes.reference, "spec": hashes.spec, "dtype": task.dtype,
                "shapes": task.shapes.model_dump(mode="json"), "derived": derived_shapes(task, config),
                "settings": config.model_dump(mode="json", include=_KEYED_SETTINGS),
                "torch": torch.__version__, "code": _code_hash()}
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


def cached_audit(task: Task, config: AuditConfig | None = None, root: Path | None = None) -> AuditReport | None:
    """The cached report of `task`'s current content, or None when it was never audited as it is now."""
    key = audit_key(task, config)
    path = (root or audit_cache_dir()) / f"{key}.json"
    try:
        entry = _Entry.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValidationError) as exc:  # a damaged entry is a miss, never an error of the caller
        log.warning("ignoring the audit cache entry %s: %s", path, str(exc).splitlines()[0])
        return None
    if entry.key != key or entry.report.reference_hash != task.hashes.reference:
        return None
    return entry.report.model_copy(update={"task_id": task.id})


def save_audit(task: Task, report: AuditReport, config: AuditConfig | None = None,
               root: Path | None = None) -> Path | None:
    """Store `report` for `task`'s current content; returns the file, or None for reports that are retried
    instead (a timeout or a crashed worker). Written atomically: a reader never sees half an entry."""
    if report.task_id != task.id or report.reference_hash != task.hashes.reference:
        raise ValueError(f"the report of {report.task_id!r} was not made from task {task.id!r} as it is now")
    if any(f.rule in _NOT_CACHED for f in report.findings):
        return None
    key = audit_key(task, config)
    folder = root or audit_cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{key}.json"
    write_atomic(path, _Entry(key=key, report=report).model_dump_json(by_alias=True, indent=1))
    return path


def audit_failure(task: Task) -> str:
    """Why the task's audit failed ("" when it passed, was never run, or is stale: audited before an edit).

    The audit is the task's own (`audit.json`) when it is of the current reference, else the one `tasks audit`
    cached for the task's current content (a file read; a stale cache entry is never found)."""
    audit = task.audit
    if audit is None or audit.reference_hash != task.hashes.reference:
        audit = cached_audit(task)
    if audit is None or audit.passed:
        return ""
    rules = sorted({f.rule for f in audit.findings if f.severity == "reject"}) or ["failed"]
    return "audit failed: " + ", ".join(rules)
