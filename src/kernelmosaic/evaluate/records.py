"""What the metrics read: each episode of a run, rebuilt from the store (its events' verdicts, totals, flags).

Nothing here judges anything: the answer of an episode is its best solution as the store recorded it (the one
definition of verified), else the last candidate written; its verdicts are the ones its events carry.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from kernelmosaic.contracts.trajectory import ToolCallEvent, ToolResultEvent, Totals
from kernelmosaic.contracts.verdict import Verdict
from kernelmosaic.contracts.verified import Verification, check_candidate
from kernelmosaic.evaluate.samples import split_sample
from kernelmosaic.runs.task_meta import TaskMeta
from kernelmosaic.store import Store
from kernelmosaic.store.records import EpisodeInfo, RunInfo

__all__ = ["Judged", "EpisodeRecord", "episode_record", "load_records", "task_meta_of"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class Judged(_Model):
    step: int
    tool: str
    candidate_sha256: str
    verdict: Verdict


class EpisodeRecord(_Model):
    episode_id: int
    task_id: str
    sample: int = 0
    meta: TaskMeta = Field(default_factory=TaskMeta)
    status: str
    exit_reason: str = ""
    exit_detail: str = ""
    """Why the episode ended, in words (a model failure's `<kind>: <message>`)."""
    task_flags: list[str] = Field(default_factory=list)
    solved: bool = False
    """The store's judgement: the episode has a verified solution (contracts.verified)."""
    totals: Totals = Field(default_factory=Totals)
    writes: list[str] = Field(default_factory=list)
    """Candidate sha256s in the order they were written (repeats kept)."""
    judged: list[Judged] = Field(default_factory=list)
    """Every verdict of the episode, in order."""
    answer_sha256: str = ""
    """The best solution's candidate, else the last candidate written; empty when none was written."""

    def history(self, sha: str) -> list[Verdict]:
        return [j.verdict for j in self.judged if j.candidate_sha256 == sha]

    @property
    def answer(self) -> Verification | None:
        """The one definition of verified applied to the answer's verdicts; None without an answer."""
        return check_candidate(self.history(self.answer_sha256), self.task_flags) if self.answer_sha256 else None

    def answer_verdict(self) -> Verdict | None:
        history = self.history(self.answer_sha256)
        return history[-1] if history else None

    def answer_timing(self) -> Verdict | None:
        """The latest timed, accepted verdict of the answer since its last rejection (what its speedups rest on)."""
        history = self.history(self.answer_sha256)
        verification = self.answer
        rests = [history[i] for i in (verification.rests_on if verification else [])]
        timed = [v for v in rests if v.accepted and v.timing is not None]
        return timed[-1] if timed else None


def task_meta_of(run: RunInfo) -> dict[str, TaskMeta]:
    """Level, category and title of each task, as the run recorded them in its configuration (`runs.task_meta`)."""
    raw = run.config.get("task_meta") or {}
    return {task_id: TaskMeta.model_validate(meta) for task_id, meta in raw.items()}


def episode_record(store: Store, info: EpisodeInfo, meta: dict[str, TaskMeta]) -> EpisodeRecord:
    """One episode's verdicts and answer, read from its stored events."""
    trajectory = store.load_trajectory(info.id)
    writes: list[str] = []
    judged: list[Judged] = []
    names: dict[str, str] = {}
    for event in trajectory.events:
        if isinstance(event, ToolCallEvent):
            names[event.call.id] = event.call.name
        elif isinstance(event, ToolResultEvent):
            if event.name == "write_candidate" and event.candidate_sha256:
                writes.append(event.candidate_sha256)
            if event.verdict is not None and event.candidate_sha256:
                judged.append(Judged(step=event.step, tool=names.get(event.call_id, event.name),
                                     candidate_sha256=event.candidate_sha256, verdict=event.verdict))
    task_id, sample = split_sample(info.task_id)
    answer = info.best_candidate_sha256 or (writes[-1] if writes else "")
    return EpisodeRecord(episode_id=info.id, task_id=task_id, sample=sample, meta=meta.get(task_id, TaskMeta()),
                         status=info.status, exit_reason=info.exit_reason, exit_detail=info.exit_detail, task_flags=info.task_flags,
                         solved=info.solved, totals=info.totals, writes=writes, judged=judged, answer_sha256=answer)


def load_records(store: Store, run_id: int) -> tuple[RunInfo, list[EpisodeRecord]]:
    """The run and every episode of it, in episode order."""
    run = store.get_run(run_id)
    meta = task_meta_of(run)
    return run, [episode_record(store, info, meta) for info in store.list_episodes(run_id)]
