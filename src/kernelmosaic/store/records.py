"""Typed, JSON-clean objects the store returns: runs, episodes (with their events), run summaries."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from kernelmosaic.contracts.trajectory import Event, Totals

__all__ = ["RunStatus", "EpisodeStatus", "RunInfo", "EpisodeInfo", "Episode", "RunSummary", "speedup_summary"]

RunStatus = Literal["running", "interrupted", "done", "failed"]
"""`interrupted`: stopped by Ctrl-C or SIGTERM; `--resume` continues it (and sets it `running` again)."""
EpisodeStatus = Literal["running", "done", "failed"]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class RunInfo(_Record):
    id: int
    """Database id of the run."""
    name: str
    """Human name; `find_resumable_run` looks runs up by it."""
    created: datetime
    """When the run was created (UTC)."""
    finished: datetime | None = None
    """When `finish_run` was called; None while the run is open."""
    model: str
    """Model spec the run was started with (e.g. `openai:qwen2.5-coder` or `replay:FILE`)."""
    task_source: str
    """Where the tasks came from (a folder, a dataset name, `seed`)."""
    config: dict[str, Any] = Field(default_factory=dict)
    """The full run configuration, as the agent dumped it."""
    status: RunStatus
    """`running` until `finish_run`; `done` or `failed` after."""


class EpisodeInfo(_Record):
    id: int
    """Database id of the episode."""
    run_id: int
    """The run it belongs to."""
    task_id: str
    """Task id, unique within the run."""
    task_sha256: str = ""
    """Hash of the task when the episode started; a resume with a different hash is refused."""
    problem_sha256: str = ""
    """Hash of the problem module the verifier ran against."""
    status: EpisodeStatus
    """`running` (also: interrupted by a crash), `done` (the loop ended normally), `failed` (infrastructure error)."""
    exit_reason: str = ""
    """Empty while running; then the loop's exit reason (`submitted`, `budget_exhausted`, ...)."""
    exit_detail: str = ""
    """Why it ended, for people (a model failure's HTTP status and message, an exception)."""
    best_candidate_sha256: str = ""
    """sha256 of the best solution's source (it passes on its own record; see `solved`); empty when none."""
    solved: bool = False
    """The episode has a verified solution (`contracts.verified`): its own record passes and its task is unflagged."""
    task_flags: list[str] = Field(default_factory=list)
    """`task-*` flags of its task: its solutions are kept, marked, and never counted as solved."""
    best_speedup_vs_eager: float = 0.0
    """Speedup of the best verified solution over eager PyTorch; 0.0 when none or when it was not timed."""
    best_speedup_caveat: str = ""
    """Why that speedup is not a measurement (`contracts.speedup`: `unreliable: ...`); "" when it is one."""
    totals: Totals = Field(default_factory=Totals)
    """Recorded totals, or totals derived from the events while the episode has none recorded."""
    started: datetime
    """When the episode was first started (UTC)."""
    finished: datetime | None = None
    """When it was finished; None while running."""


class Episode(EpisodeInfo):
    """An episode with its events: what `start_episode` returns so the agent can resume."""

    events: list[Event] = Field(default_factory=list)
    """Every committed event, ordered by seq (seq i is `events[i]`)."""
    next_seq: int = 0
    """The seq the next `append_event` must use."""


class RunSummary(_Record):
    run: RunInfo
    """The run itself."""
    episodes: int = 0
    """Episodes started."""
    done: int = 0
    """Episodes whose loop ended normally."""
    running: int = 0
    """Episodes still running, or interrupted by a crash (they resume)."""
    failed: int = 0
    """Episodes ended by an infrastructure error."""
    solved: int = 0
    """Episodes with at least one verified solution (`contracts.verified`; flagged tasks never count)."""
    flagged_tasks: dict[str, list[str]] = Field(default_factory=dict)
    """Task id -> its `task-*` flags, for episodes whose task is degenerate or failed its audit."""
    pass_rate: float = 0.0
    """Finished episodes with a verified solution / finished episodes (done + failed); 0.0 when none finished."""
    best_speedups: dict[str, float] = Field(default_factory=dict)
    """Task id -> best reliable speedup vs eager among its verified solutions (timed ones only; `contracts.speedup`)."""
    unreliable_speedups: dict[str, str] = Field(default_factory=dict)
    """Task id -> the caveat of its best speedup, for tasks whose verified solutions' speedups are all unreliable."""
    geomean_speedup_vs_eager: float = 0.0
    """Geometric mean of `best_speedups`; 0.0 when empty."""
    exit_reasons: dict[str, int] = Field(default_factory=dict)
    """Exit reason -> number of finished episodes."""
    totals: Totals = Field(default_factory=Totals)
    """Sum of the episodes' totals (tokens, cost, GPU-seconds, wall time, turns)."""


def speedup_summary(summary: RunSummary) -> str:
    """A run's speedup in words: the geometric mean of its reliable best speedups, and how many tasks have only
    unreliable ones (`contracts.speedup`: never part of the mean)."""
    shaky = len(summary.unreliable_speedups)
    note = f" ({shaky} task(s) with only unreliable speedups left out)" if shaky else ""
    if summary.best_speedups:
        return f"geomean best speedup {summary.geomean_speedup_vs_eager:.2f}x{note}"
    return f"no reliable speedup ({shaky} task(s) with only unreliable ones)" if shaky else "no timed solution"
