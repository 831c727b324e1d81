"""How pytest-xdist hands the suite to its workers (`--dist loadscope`, see tests/conftest.py): a module per worker,
as before, but a folder whose modules share an expensive session fixture is one unit, and the units that take minutes
go out first.

xdist's own order (most tests first) started the README loop, one test of five minutes, last: the run then ended
five minutes after the other worker had nothing left. And a session fixture is per worker, so a folder split over two
workers paid for its shared evaluation runs, recorded episodes or Ray instance twice.
"""

from __future__ import annotations

from xdist.scheduler import LoadScopeScheduling

__all__ = ["CostFirstScheduling"]

SHARED_FOLDERS = ("tests/evaluate", "tests/scale", "tests/sft")
"""Folders whose modules read one session fixture (evaluate: the one-shot and generations runs; scale: the Ray
instance and its build cache; sft: the recorded episodes), so one worker runs the whole folder."""

LONG_FIRST = (
    "tests/agent/test_main_job_real.py",
    "tests/verify/test_pch.py",
    "tests/corpus/test_corpus_cpu.py",
    "tests/evaluate",
    "tests/scale",
    "tests/verify/test_policy_cpu.py",
    "tests/verify_static/test_legit_fixtures_run.py",
    "tests/verify/test_call_checks_cpu.py",
    "tests/verify/test_throughput_cpu.py",
    "tests/verify/test_lean_unit.py",
    "tests/verify/test_verify_cpu.py",
    "tests/sft",
    "tests/verify/test_numerics_budget.py",
    "tests/agent/test_agent_e2e_cpu.py",
    "tests/verify/test_numerics_cpu.py",
    "tests/verify/test_build_lock.py",
    "tests/verify/test_harness_integrity_cpu.py",
    "tests/verify/test_slot_pool.py",
    "tests/verify/test_build_failure_record.py",
)
"""Units of half a minute and more with two workers on two cores (`--durations`, 2026-12-02), longest first; the rest
follow in xdist's order (most tests first), which put the few-test, long modules last. A name missing here or gone
from the suite only costs balance, never a test."""


class CostFirstScheduling(LoadScopeScheduling):
    def _split_scope(self, nodeid: str) -> str:
        folder = nodeid.split("::", 1)[0].rpartition("/")[0]
        return folder if folder in SHARED_FOLDERS else super()._split_scope(nodeid)

    def _assign_work_unit(self, node) -> None:
        # The base class hands out the queue's first unit: put the longest known one there.
        first = min(self.workqueue, key=_rank)
        self.workqueue.move_to_end(first, last=False)
        super()._assign_work_unit(node)


def _rank(scope: str) -> int:
    return LONG_FIRST.index(scope) if scope in LONG_FIRST else len(LONG_FIRST)
