"""The tasks stage: the Task schema and its forms, loaders and exporters, the math-spec compiler, the
synthesizer, audits and decontamination.

Exports are resolved lazily so that the audit worker (`python -m kernelmosaic.tasks.audit.worker`)
imports only the standard library and torch.
"""

from __future__ import annotations

import importlib

__all__ = ["Task", "AuditReport", "Finding", "TaskFormatError", "load_tasks", "load_task_folder",
           "save_task_folder", "audit_tasks", "AuditConfig"]

_HOME = {
    "Task": "kernelmosaic.tasks.schema", "AuditReport": "kernelmosaic.tasks.schema",
    "Finding": "kernelmosaic.tasks.schema", "TaskFormatError": "kernelmosaic.tasks.errors",
    "load_tasks": "kernelmosaic.tasks.sources", "load_task_folder": "kernelmosaic.tasks.folder",
    "save_task_folder": "kernelmosaic.tasks.folder", "audit_tasks": "kernelmosaic.tasks.audit.runner",
    "AuditConfig": "kernelmosaic.tasks.audit.runner",
}


def __getattr__(name: str) -> object:
    if name in _HOME:
        return getattr(importlib.import_module(_HOME[name]), name)
    raise AttributeError(f"module 'kernelmosaic.tasks' has no attribute {name!r}")
