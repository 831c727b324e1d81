"""The trajectory: every step of one agent episode, versioned as `kernelmosaic.trajectory/2`.

Events are a tagged union so readers can dispatch on `type`. Version 2 keeps verdicts typed, records the tool
schemas the model was offered and where a replayed recording came from, and judges its best solution with the
one definition of verified; `parse_trajectory` still reads version 1 files.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from kernelmosaic.contracts.messages import Message, ToolCall, ToolSpec, Usage
from kernelmosaic.contracts.verdict import Verdict
from kernelmosaic.contracts.verified import Verification

__all__ = [
    "TRAJECTORY_SCHEMA",
    "MessageEvent",
    "ToolCallEvent",
    "ToolResultEvent",
    "GuidanceEvent",
    "FinalCheckEvent",
    "Event",
    "Solution",
    "Totals",
    "Trajectory",
    "TRAJECTORY_V1",
    "parse_trajectory",
]

TRAJECTORY_SCHEMA = "kernelmosaic.trajectory/2"
TRAJECTORY_V1 = "kernelmosaic.trajectory/1"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class MessageEvent(_Model):
    type: Literal["message"] = "message"
    step: int
    message: Message
    usage: Usage = Field(default_factory=Usage)


class ToolCallEvent(_Model):
    type: Literal["tool_call"] = "tool_call"
    step: int
    call: ToolCall


class ToolResultEvent(_Model):
    type: Literal["tool_result"] = "tool_result"
    step: int
    call_id: str
    name: str
    content: str
    """What the model was shown."""
    verdict: Verdict | None = None
    """The full verdict (`kernelmosaic.verdict/1`) when the tool ran the verifier."""
    candidate_sha256: str = ""
    gpu_seconds: float = 0.0


class GuidanceEvent(_Model):
    type: Literal["guidance"] = "guidance"
    step: int
    item_ids: list[str]
    reason: str = ""
    """Why these items were retrieved: task category, failure type."""


class FinalCheckEvent(_Model):
    """The harness's own final verification of the best candidate when the episode ended without `submit()` (a
    budget, a format-error limit): not part of the conversation, so no tool call answers to it."""

    type: Literal["final_check"] = "final_check"
    step: int
    candidate_sha256: str
    verdict: Verdict
    reason: str = ""
    """Why the harness checked it (the episode's exit reason)."""
    gpu_seconds: float = 0.0


Event = Annotated[MessageEvent | ToolCallEvent | ToolResultEvent | GuidanceEvent | FinalCheckEvent,
                  Field(discriminator="type")]


class Solution(_Model):
    source: str
    candidate_sha256: str
    verdict: Verdict
    """Its latest verdict."""
    step: int
    verification: Verification | None = None
    """The one definition of verified applied to its whole verdict history (absent in version 1 files)."""

    @property
    def verified(self) -> bool:
        return self.verification is not None and self.verification.verified


class Totals(_Model):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    gpu_seconds: float = 0.0
    wall_seconds: float = 0.0
    turns: int = 0


class Trajectory(_Model):
    schema_: str = Field(default=TRAJECTORY_SCHEMA, alias="schema")
    task_id: str
    task_sha256: str = ""
    problem_sha256: str = ""
    model: str
    origin_model: str = ""
    """For a replayed run: the model that wrote the recording (`replay:` only replays it)."""
    tools: list[ToolSpec] = Field(default_factory=list)
    """The tool schemas the model was offered, exactly as sent."""
    config: dict[str, Any] = Field(default_factory=dict)
    events: list[Event] = Field(default_factory=list)
    best: Solution | None = None
    """The best candidate whose latest verdict is accepted; `best.verified` says whether it is a verified solution."""
    totals: Totals = Field(default_factory=Totals)
    exit_reason: str = ""
    """Empty while running; then `submitted`, `budget_exhausted`, `format_error`, `model_error`, ..."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, use_attribute_docstrings=True)

    def to_json(self) -> str:
        return self.model_dump_json(by_alias=True, indent=1)


def parse_trajectory(text: str) -> Trajectory:
    """A trajectory from its JSON, version 2 or version 1 (upgraded: same events, verdicts typed)."""
    data = json.loads(text)
    schema = data.get("schema", TRAJECTORY_V1) if isinstance(data, dict) else None
    if schema == TRAJECTORY_V1:
        data["schema"] = TRAJECTORY_SCHEMA
    elif schema != TRAJECTORY_SCHEMA:
        raise ValueError(f"not a KernelMosaic trajectory (schema {schema!r}; expected {TRAJECTORY_SCHEMA} or {TRAJECTORY_V1})")
    return Trajectory.model_validate(data)
