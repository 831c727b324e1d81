"""What an episode knows between steps: the conversation, candidates seen, the best verified one, totals.

It can be rebuilt from recorded events, which is how a crashed episode resumes without losing a step.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from kernelmosaic.agent.specs import argument_error
from kernelmosaic.models.messages import Message, ToolCall, Usage
from kernelmosaic.store.trajectory import (
    Event,
    GuidanceEvent,
    MessageEvent,
    Solution,
    ToolCallEvent,
    ToolResultEvent,
)

__all__ = ["EpisodeState", "sha256_text", "rank_solution"]


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def rank_solution(verdict: dict[str, Any]) -> tuple[int, float]:
    """Higher is better: a benchmarked candidate beats an unmeasured one, then lower median time wins."""
    timing = verdict.get("timing") or {}
    median = (timing.get("candidate") or {}).get("median_ms")
    return (1, -float(median)) if median is not None else (0, 0.0)


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
    best: Solution | None = None
    guidance_shown: set[str] = field(default_factory=set)
    last_status: str = ""
    """Status of the latest verdict, for progress displays."""

    @property
    def phase(self) -> str:
        """`repair` until some candidate passed the test, then `optimize`."""
        return "optimize" if self.best is not None else "repair"

    @property
    def current_source(self) -> str:
        return self.sources.get(self.current_sha, "")

    def set_candidate(self, source: str) -> str:
        sha = sha256_text(source)
        self.sources[sha] = source
        self.current_sha = sha
        return sha

    def consider(self, sha: str, verdict: dict[str, Any], step: int) -> bool:
        """Offer a verdict for the candidate `sha`; returns True when it became the best solution."""
        self.last_status = str(verdict.get("status", ""))
        if not verdict.get("accepted") or sha not in self.sources:
            return False
        new = Solution(source=self.sources[sha], candidate_sha256=sha, verdict=verdict, step=step)
        if self.best is None:
            self.best = new
            return True
        new_rank, best_rank = rank_solution(verdict), rank_solution(self.best.verdict)
        # Unmeasured candidates cannot be compared on speed, so the latest one stands in until one is timed;
        # a re-measured best takes its newest timing.
        if new_rank > best_rank or (new_rank[0] == best_rank[0] == 0) or (sha == self.best.candidate_sha256 and new_rank[0]):
            self.best = new
            return True
        return False

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
    def from_events(cls, events: list[Event], wall_seconds: float = 0.0) -> EpisodeState:
        state = cls(wall_seconds=wall_seconds)
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
        return state
