"""Chat messages, tool calls and model replies: the types every model backend speaks, and the agent and store record."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ToolCall", "Message", "Usage", "ModelReply", "ToolSpec"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class ToolCall(_Model):
    id: str
    """Call id; backends invent one when the server sent none."""
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    """Parsed arguments. Empty when they could not be parsed (see `parse_error`)."""
    raw_arguments: str = ""
    """The arguments exactly as the model produced them."""
    parse_error: str = ""
    """Why `raw_arguments` could not be turned into an object, when it could not."""


class Message(_Model):
    role: Literal["system", "user", "assistant", "tool"]
    content: str = ""
    reasoning: str = ""
    """For `role == "assistant"`: the reasoning text the backend returned beside the content, when it returns one."""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str = ""
    """For `role == "tool"`: the call this message answers."""
    name: str = ""
    """For `role == "tool"`: the tool's name."""


class Usage(_Model):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cost_usd=self.cost_usd + other.cost_usd,
        )


class ModelReply(_Model):
    message: Message
    """The assistant message (role `assistant`), tool calls normalized."""
    usage: Usage = Field(default_factory=Usage)
    raw: str = ""
    """The raw text the backend received, kept for debugging malformed replies."""
    finish_reason: str = ""


class ToolSpec(_Model):
    """A tool offered to the model, in JSON-schema function form."""

    name: str
    description: str
    parameters: dict[str, Any]
    """JSON schema of the arguments object."""

    def openai_format(self) -> dict[str, Any]:
        return {"type": "function", "function": {"name": self.name, "description": self.description, "parameters": self.parameters}}
