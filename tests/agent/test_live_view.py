"""The live view's header says no timed solution rather than a geomean speedup of 0.00x (a speedup never measured is
not zero), and the geomean of what was timed once something was."""

from __future__ import annotations

from datetime import UTC, datetime

from kernelmosaic.agent.live import RunView
from kernelmosaic.contracts.trajectory import Totals
from kernelmosaic.store.records import EpisodeInfo


def _episode(task: str, speedup: float) -> EpisodeInfo:
    now = datetime.now(UTC)
    return EpisodeInfo(id=1, run_id=1, task_id=task, task_sha256="0" * 64, status="done", exit_reason="submitted",
                       solved=speedup > 0, best_speedup_vs_eager=speedup, totals=Totals(), started=now, finished=now)


def test_the_header_says_nothing_was_timed_until_something_is():
    view = RunView(1, "replay:bundled", "cpu", 2)
    view.on_done(_episode("l1_relu", 0.0))
    header = view._header().plain
    assert "no timed solution yet" in header and "0.00x" not in header
    view.on_done(_episode("l1_gelu", 4.0))
    assert "geomean speedup 4.00x" in view._header().plain
