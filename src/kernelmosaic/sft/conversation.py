"""An episode's conversation as the model had it, and the same conversation in TRL's conversational format.

The messages are rebuilt with the agent's own replay (`EpisodeState.from_events`, what a resumed episode sends
the model), so an exported row and a resumed episode cannot disagree about what was said.
"""

from __future__ import annotations

from typing import Any

from kernelmosaic.contracts.episode_state import EpisodeState
from kernelmosaic.contracts.messages import Message, ToolSpec
from kernelmosaic.contracts.trajectory import Trajectory

__all__ = ["ConversationError", "episode_messages", "check_tool_pairing", "trl_messages", "trl_tools"]


class ConversationError(ValueError):
    """The recorded conversation cannot be trained on as it stands (a tool call without its answer, say)."""


def episode_messages(trajectory: Trajectory) -> list[Message]:
    """Every message of the episode in order: system, user, each assistant turn as sent, one tool message per call."""
    return list(EpisodeState.from_events(list(trajectory.events)).messages)


def check_tool_pairing(messages: list[Message], where: str = "conversation") -> None:
    """Raise `ConversationError` unless every tool call is answered by exactly one tool message, in call order,
    before the next assistant turn, and every tool message answers a call."""
    pending: list[str] = []
    for i, m in enumerate(messages):
        if m.role == "assistant":
            if pending:
                raise ConversationError(f"{where}: message {i}: tool call(s) {', '.join(pending)} have no tool message")
            pending = [c.id for c in m.tool_calls]
            if len(set(pending)) != len(pending):
                raise ConversationError(f"{where}: message {i}: repeated tool call id in one turn")
        elif m.role == "tool":
            if not pending or pending[0] != m.tool_call_id:
                expected = pending[0] if pending else "none"
                raise ConversationError(f"{where}: message {i}: tool message for {m.tool_call_id!r}, expected {expected!r}")
            pending.pop(0)
    if pending:
        raise ConversationError(f"{where}: the last turn's tool call(s) {', '.join(pending)} have no tool message")


def _trl_message(m: Message) -> dict[str, Any]:
    entry: dict[str, Any] = {"role": m.role, "content": m.content}
    if m.role == "assistant":
        if m.reasoning:
            entry["reasoning_content"] = m.reasoning
        if m.tool_calls:
            # A call whose arguments did not parse is kept as `{}`: that is what the model was shown of it on every
            # later turn (models/chat_format.py); its tool message says what was wrong.
            entry["tool_calls"] = [
                {"id": c.id, "type": "function",
                 "function": {"name": c.name, "arguments": {} if c.parse_error else dict(c.arguments)}}
                for c in m.tool_calls
            ]
    elif m.role == "tool":
        entry["tool_call_id"] = m.tool_call_id
        entry["name"] = m.name
    return entry


def trl_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """TRL's conversational tool-calling form: assistant `tool_calls` with arguments as objects, `tool` turns keyed by
    `tool_call_id`, reasoning as `reasoning_content`."""
    return [_trl_message(m) for m in messages]


def trl_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    """The tool schemas as JSON-schema functions, as chat templates take them."""
    return [t.openai_format() for t in tools]
