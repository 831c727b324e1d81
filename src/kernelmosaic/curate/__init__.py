"""The curate stage: near-duplicate removal, diversity-aware selection with coverage quotas, and the human
review queue (its web page, its audit log and the gate that lets only accepted tasks into `generate`).

Exports resolve lazily so that `kernelmosaic --help` does not import numpy, datasketch or FastAPI.
"""

from __future__ import annotations

import importlib

__all__ = ["find_duplicates", "DuplicateConfig", "DuplicateReport", "operator_signature", "Embedder",
           "SelectConfig", "Quotas", "Selection", "select_tasks", "ReviewGate", "accepted_task_ids",
           "apply_review"]

_HOME = {
    "find_duplicates": "kernelmosaic.curate.duplicates", "DuplicateConfig": "kernelmosaic.curate.duplicates",
    "DuplicateReport": "kernelmosaic.curate.duplicates", "operator_signature": "kernelmosaic.curate.opsig",
    "Embedder": "kernelmosaic.curate.embed", "SelectConfig": "kernelmosaic.curate.select",
    "Quotas": "kernelmosaic.curate.select", "Selection": "kernelmosaic.curate.select",
    "select_tasks": "kernelmosaic.curate.pipeline", "ReviewGate": "kernelmosaic.curate.review.gate",
    "accepted_task_ids": "kernelmosaic.curate.review.gate", "apply_review": "kernelmosaic.curate.review.gate",
}


def __getattr__(name: str) -> object:
    if name in _HOME:
        return getattr(importlib.import_module(_HOME[name]), name)
    raise AttributeError(f"module 'kernelmosaic.curate' has no attribute {name!r}")
