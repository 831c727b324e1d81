"""Everything the review page needs before it serves: duplicates within the set, decontamination against an
evaluation set, and (optionally) fresh audits run in `tasks.audit`'s isolated workers, never in-process.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from kernelmosaic.curate.duplicates import find_duplicates
from kernelmosaic.curate.review.board import ReviewBoard
from kernelmosaic.curate.review.checks import task_checks
from kernelmosaic.store.reviews import ReviewLog
from kernelmosaic.tasks.schema import Task

__all__ = ["build_board"]

log = logging.getLogger(__name__)


def build_board(tasks: Sequence[Task], review_log: ReviewLog, against: Sequence[Task] | None = None,
                against_name: str = "", audit: bool = False, jobs: int = 2) -> ReviewBoard:
    tasks = list(tasks)
    if audit:
        from kernelmosaic.tasks.audit.runner import AuditConfig, audit_tasks

        stale = [t for t in tasks if t.audit is None or t.audit.reference_hash != t.hashes.reference]
        log.info("auditing %d tasks without a fresh report", len(stale))
        reports = {r.task_id: r for r in audit_tasks(stale, AuditConfig(jobs=jobs))} if stale else {}
        tasks = [t.model_copy(update={"audit": reports[t.id]}) if t.id in reports else t for t in tasks]
    decontam = None
    if against is not None:
        from kernelmosaic.tasks.decontam import decontaminate

        decontam = decontaminate(tasks, list(against), against_name)
    duplicates = find_duplicates(tasks)
    checks = {t.id: task_checks(t, duplicates, decontam) for t in tasks}
    return ReviewBoard(tasks, review_log, checks)
