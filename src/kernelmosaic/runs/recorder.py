"""Records an episode as it happens: each event goes to the store at once, the trajectory JSON after each step."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from kernelmosaic.contracts.episode_state import EpisodeState
from kernelmosaic.contracts.messages import Message, ToolCall, Usage
from kernelmosaic.contracts.tool_output import ToolOutput
from kernelmosaic.contracts.trajectory import (
    Event,
    FinalCheckEvent,
    GuidanceEvent,
    MessageEvent,
    ToolCallEvent,
    ToolResultEvent,
    Totals,
    Trajectory,
)
from kernelmosaic.contracts.verdict import Verdict
from kernelmosaic.paths import write_atomic
from kernelmosaic.scrub import scrub
from kernelmosaic.store import Store
from kernelmosaic.store.records import EpisodeInfo

__all__ = ["Recorder"]

log = logging.getLogger(__name__)


class Recorder:
    def __init__(self, store: Store, episode_id: int, state: EpisodeState, header: Trajectory, path: Path) -> None:
        self.store, self.episode_id, self.state, self.header, self.path = store, episode_id, state, header, path
        self._started = time.monotonic()
        self.on_save: Callable[[], None] | None = None
        """Called after every checkpoint (progress displays)."""

    @classmethod
    def open(cls, store: Store, *, run_id: int, episode_id: str, task_sha256: str, problem_sha256: str,
             flags: list[str], header: dict[str, Any], opening: list[Event], trajectory: Trajectory, path: Path) -> Recorder:
        """The one set-up of an episode, new or resumed (the agent's, one-shot evaluation's, a judged generation's):
        started in the store (or found there), its `opening` events stored where they are not yet (a new episode, or
        one that stopped while opening), its state rebuilt from every stored event, and a recorder writing to the
        store and to the trajectory file `path`."""
        episode = store.start_episode(run_id, episode_id, task_sha256, problem_sha256, flags, header)
        events = list(episode.events)
        for seq in range(len(events), len(opening)):
            store.append_event(episode.id, seq, opening[seq])
            events.append(opening[seq])
        state = EpisodeState.from_events(events, wall_seconds=episode.totals.wall_seconds, task_flags=episode.task_flags)
        return cls(store, episode.id, state, trajectory, path)

    def event(self, event: Event) -> None:
        self.store.append_event(self.episode_id, len(self.state.events), event)
        self.state.events.append(event)

    def message(self, message: Message, usage: Usage | None = None) -> None:
        if message.role == "tool":  # an exit's closing tool result (e.g. submit)
            self.event(ToolResultEvent(step=self.state.turns, call_id=message.tool_call_id, name=message.name,
                                       content=message.content))
        else:
            self.event(MessageEvent(step=self.state.turns, message=message, usage=usage or Usage()))
            if usage is not None:
                self.state.usage = self.state.usage + usage
        self.state.messages.append(message)

    def call(self, call: ToolCall) -> None:
        self.event(ToolCallEvent(step=self.state.turns, call=call))

    def result(self, call: ToolCall, out: ToolOutput) -> None:
        if out.source:
            self.store.record_candidate(self.episode_id, out.source)
        if out.verdict is not None:  # the store re-judges the candidate: its solution row follows its verdicts
            self.store.record_verdict(self.episode_id, out.candidate_sha256, out.verdict)
        self.state.gpu_seconds += out.gpu_seconds
        self.event(ToolResultEvent(step=self.state.turns, call_id=call.id, name=call.name, content=out.content,
                                   verdict=out.verdict, candidate_sha256=out.candidate_sha256, gpu_seconds=out.gpu_seconds))
        self.state.messages.append(Message(role="tool", content=out.content, tool_call_id=call.id, name=call.name))
        if out.guidance:
            self.guidance([i.ref for i in out.guidance], out.guidance_reason)

    def final_check(self, sha: str, verdict: Verdict, reason: str, gpu_seconds: float) -> None:
        """Record the harness's own final check of the best candidate (no tool call answers to it)."""
        self.store.record_verdict(self.episode_id, sha, verdict)
        self.state.gpu_seconds += gpu_seconds
        self.event(FinalCheckEvent(step=self.state.turns, candidate_sha256=sha, verdict=verdict, reason=reason,
                                   gpu_seconds=gpu_seconds))

    def guidance(self, refs: list[str], reason: str) -> None:
        self.event(GuidanceEvent(step=self.state.turns, item_ids=refs, reason=reason))
        self.state.guidance_shown.update(r.split("@")[0] for r in refs)

    def totals(self) -> Totals:
        s = self.state
        return Totals(prompt_tokens=s.usage.prompt_tokens, completion_tokens=s.usage.completion_tokens,
                      cost_usd=s.usage.cost_usd, gpu_seconds=round(s.gpu_seconds, 3), turns=s.turns,
                      wall_seconds=round(s.wall_seconds + time.monotonic() - self._started, 3))

    def trajectory(self, exit_reason: str = "") -> Trajectory:
        return self.header.model_copy(update={"events": list(self.state.events), "best": self.state.best,
                                              "totals": self.totals(), "exit_reason": exit_reason})

    def save(self, exit_reason: str = "") -> None:
        """Checkpoint totals in the store and rewrite the trajectory file atomically."""
        self.store.save_totals(self.episode_id, self.totals())
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(self.path, scrub(self.trajectory(exit_reason).to_json()))
        if self.on_save is not None:
            self.on_save()

    def finish(self, exit_reason: str, status: Literal["done", "failed"] = "done", detail: str = "") -> EpisodeInfo:
        self.save(exit_reason)
        return self.store.finish_episode(self.episode_id, exit_reason, self.totals(), self.state.best, status=status,
                                         detail=detail)
