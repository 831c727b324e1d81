"""Synthesis with an audit gate: candidates that an audit rejects (constant or degenerate outputs, spec
disagreement) are dropped and more are drawn, so every task written out has passed its audit.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from kernelmosaic.tasks.audit.runner import AuditConfig, audit_tasks
from kernelmosaic.tasks.schema import AuditReport, Task
from kernelmosaic.tasks.synth.composer import synthesize

__all__ = ["synthesize_audited"]

log = logging.getLogger(__name__)


def synthesize_audited(n: int, seed: int = 0, config: AuditConfig | None = None,
                       progress: Callable[[AuditReport], None] | None = None) -> tuple[list[Task], int]:
    """The first `n` candidates of `synthesize(..., seed)` that pass their audit (report attached), and the
    number rejected. Deterministic: candidates are drawn in a fixed order and audits are deterministic."""
    kept: list[Task] = []
    rejected, audited, size = 0, 0, n + n // 4 + 4
    while len(kept) < n:
        candidates = synthesize(size, seed)[audited:]  # same seed: a longer run extends the same sequence
        for task, report in zip(candidates, audit_tasks(candidates, config, progress), strict=True):
            if report.passed:
                kept.append(task.model_copy(update={"audit": report}))
            else:
                rejected += 1
                log.info("synth: dropped %s (%s)", task.id, ", ".join(f.rule for f in report.rejects))
        audited, size = size, size + (n - len(kept)) * 2 + 4
    return kept[:n], rejected
