"""Our `Message` list written in the dict shapes servers and chat templates expect."""

from __future__ import annotations

import json
from typing import Any

from kernelmosaic.contracts.messages import Message

__all__ = ["to_openai_messages", "to_template_messages"]


def _arguments_text(arguments: dict[str, Any], parse_error: str) -> str:
    # A call whose arguments were malformed is sent back as "{}": vLLM and SGLang decode the
    # arguments of past calls to render their chat template and answer 400 on invalid JSON. The
    # model still learns what went wrong from the tool result the agent attaches to that call.
    return "{}" if parse_error else json.dumps(arguments)


def to_openai_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Chat Completions `messages`: arguments as JSON strings, tool results keyed by call id."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "tool":
            out.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content})
        elif m.role == "assistant" and m.tool_calls:
            calls = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": _arguments_text(c.arguments, c.parse_error)},
                }
                for c in m.tool_calls
            ]
            out.append({"role": "assistant", "content": m.content or None, "tool_calls": calls})
        else:
            out.append({"role": m.role, "content": m.content})
    return out


def to_template_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Messages for `tokenizer.apply_chat_template`: arguments as objects, tool results with their name."""
    out: list[dict[str, Any]] = []
    for m in messages:
        entry: dict[str, Any] = {"role": m.role, "content": m.content}
        if m.role == "assistant" and m.tool_calls:
            entry["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in m.tool_calls
            ]
        if m.role == "tool":
            entry["tool_call_id"] = m.tool_call_id
            if m.name:
                entry["name"] = m.name
        out.append(entry)
    return out
