"""The trajectory: every step of one agent episode, versioned as `kernelmosaic.trajectory/1`.

Events are a tagged union so readers can dispatch on `type` and old files stay readable.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from kernelmosaic.models.messages import Message, ToolCall, Usage

__all__ = [
    "TRAJECTORY_SCHEMA",
    "MessageEvent",
    "ToolCallEvent",
    "ToolResultEvent",
    "GuidanceEvent",
    "Event",
    "Solution",
    "Totals",
    "Trajectory",
]

TRAJECTORY_SCHEMA = "kernelmosaic.trajectory/1"


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
    verdict: dict[str, Any] | None = None
    """The full verdict (`kernelmosaic.verdict/1`) when the tool ran the verifier."""
    candidate_sha256: str = ""
    gpu_seconds: float = 0.0


class GuidanceEvent(_Model):
    type: Literal["guidance"] = "guidance"
    step: int
    item_ids: list[str]
    reason: str = ""
    """Why these items were retrieved: task category, failure type."""


Event = Annotated[MessageEvent | ToolCallEvent | ToolResultEvent | GuidanceEvent, Field(discriminator="type")]


class Solution(_Model):
    source: str
    candidate_sha256: str
    verdict: dict[str, Any]
    step: int


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
    config: dict[str, Any] = Field(default_factory=dict)
    events: list[Event] = Field(default_factory=list)
    best: Solution | None = None
    """The best verified solution, if any candidate was accepted."""
    totals: Totals = Field(default_factory=Totals)
    exit_reason: str = ""
    """Empty while running; then `submitted`, `budget_exhausted`, `format_error`, `model_error`, ..."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, use_attribute_docstrings=True)

    def to_json(self) -> str:
        return self.model_dump_json(by_alias=True, indent=1)
