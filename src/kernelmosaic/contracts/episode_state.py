"""What an episode knows between steps: the conversation, candidates and their verdicts, the best one, totals.

It can be rebuilt from recorded events, which is how a crashed episode resumes without losing a step. Which
candidate is best is recomputed from every candidate's verdict history after each verdict, so a later rejection
of the best demotes it and the previous passing candidate takes its place.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from kernelmosaic.contracts.messages import Message, ToolCall, Usage
from kernelmosaic.contracts.tool_specs import argument_error
from kernelmosaic.contracts.trajectory import (
    Event,
    FinalCheckEvent,
    GuidanceEvent,
    MessageEvent,
    Solution,
    ToolCallEvent,
    ToolResultEvent,
)
from kernelmosaic.contracts.verdict import Verdict
from kernelmosaic.contracts.verified import check_candidate, rank, task_flags_of

__all__ = ["EpisodeState", "sha256_text"]


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class EpisodeState:
    messages: list[Message] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    turns: int = 0
    usage: Usage = field(default_factory=Usage)
    gpu_seconds: float = 0.0
    wall_seconds: float = 0.0
    """Wall time of earlier runs of this episode (before a resume)."""
    format_errors: int = 0
    """Consecutive malformed replies."""
    sources: dict[str, str] = field(default_factory=dict)
    """Every candidate source written, by sha256."""
    current_sha: str = ""
    verdicts: dict[str, list[tuple[int, Verdict]]] = field(default_factory=dict)
    """Every verdict each candidate received, with its step, oldest first."""
    task_flags: set[str] = field(default_factory=set)
    """Flags on the task (its failed audit, `task-*` findings): no solution of this episode counts as solved."""
    best: Solution | None = None
    """The best candidate whose latest verdict is accepted (timed beats untimed, then faster); see `best.verification`."""
    guidance_shown: set[str] = field(default_factory=set)
    last_status: str = ""
    """Status of the latest verdict, for progress displays."""

    @property
    def phase(self) -> str:
        """`write` before any verdict, `repair` after a failure while nothing passes, then `optimize`."""
        if self.best is not None:
            return "optimize"
        return "repair" if self.verdicts else "write"

    @property
    def current_source(self) -> str:
        return self.sources.get(self.current_sha, "")

    def set_candidate(self, source: str) -> str:
        sha = sha256_text(source)
        self.sources[sha] = source
        self.current_sha = sha
        return sha

    def consider(self, sha: str, verdict: Verdict, step: int) -> bool:
        """Record a verdict for candidate `sha` and re-pick the best; True when `sha` is the best afterwards."""
        self.last_status = verdict.status.value
        self.task_flags.update(task_flags_of(verdict))
        if sha not in self.sources:
            return False
        self.verdicts.setdefault(sha, []).append((step, verdict))
        self.best = self._pick_best()
        return self.best is not None and self.best.candidate_sha256 == sha

    def solution(self, sha: str) -> Solution:
        """The candidate as a solution: its latest verdict and the one definition of verified applied to its history."""
        history = self.verdicts[sha]
        verification = check_candidate([v for _, v in history], sorted(self.task_flags))
        return Solution(source=self.sources[sha], candidate_sha256=sha, verdict=history[-1][1], step=history[-1][0],
                        verification=verification)

    def _pick_best(self) -> Solution | None:
        def key(sha: str) -> tuple[int, float, int]:
            history = self.verdicts[sha]
            accepted_since = [v for _, v in history if v.accepted]
            timed = [v for v in accepted_since if v.timing is not None]
            speed = rank(timed[-1]) if timed else (0, 0.0)
            # Among untimed candidates the latest stands in; a timed one wins on its newest timing.
            return (speed[0], speed[1] if speed[0] else history[-1][0], history[-1][0])

        passing = [sha for sha, history in self.verdicts.items() if history[-1][1].accepted]
        return self.solution(max(passing, key=key)) if passing else None

    def pending_calls(self) -> list[ToolCall]:
        """Tool calls of the latest assistant message that have no recorded result (a crash mid-step)."""
        answered: set[str] = set()
        for event in reversed(self.events):
            if isinstance(event, ToolResultEvent):
                answered.add(event.call_id)
            if isinstance(event, MessageEvent) and event.message.role == "assistant":
                return [c for c in event.message.tool_calls if c.id not in answered]
        return []

    def logged_call_ids(self) -> set[str]:
        """Ids of tool calls recorded since the latest assistant message."""
        ids: set[str] = set()
        for event in reversed(self.events):
            if isinstance(event, MessageEvent) and event.message.role == "assistant":
                break
            if isinstance(event, ToolCallEvent):
                ids.add(event.call.id)
        return ids

    @classmethod
    def from_events(cls, events: list[Event], wall_seconds: float = 0.0, task_flags: list[str] | None = None) -> EpisodeState:
        state = cls(wall_seconds=wall_seconds, task_flags=set(task_flags or []))
        calls_by_id: dict[str, ToolCall] = {}
        for event in events:
            state.events.append(event)
            if isinstance(event, MessageEvent):
                state.messages.append(event.message)
                if event.message.role == "assistant":
                    state.turns = max(state.turns, event.step)
                    state.usage = state.usage + event.usage
                    calls = event.message.tool_calls
                    malformed = not calls or any(argument_error(c) for c in calls)
                    state.format_errors = state.format_errors + 1 if malformed else 0
            elif isinstance(event, ToolCallEvent):
                calls_by_id[event.call.id] = event.call
            elif isinstance(event, ToolResultEvent):
                state.messages.append(Message(role="tool", content=event.content, tool_call_id=event.call_id, name=event.name))
                state.gpu_seconds += event.gpu_seconds
                call = calls_by_id.get(event.call_id)
                if event.name == "write_candidate" and event.candidate_sha256 and call is not None:
                    state.set_candidate(str(call.arguments.get("source", "")))
                if event.verdict is not None and event.candidate_sha256:
                    state.consider(event.candidate_sha256, event.verdict, event.step)
            elif isinstance(event, GuidanceEvent):
                state.guidance_shown.update(event.item_ids)
            elif isinstance(event, FinalCheckEvent):
                state.gpu_seconds += event.gpu_seconds
                state.consider(event.candidate_sha256, event.verdict, event.step)
        return state
