"""Turning what a model wrote into `ToolCall`s: lenient argument parsing and tool calls written as text.

Servers and chat templates disagree on how tool calls look: arguments may arrive as a JSON string,
as an already-decoded object, as JSON wrapped in a code fence or with trailing commas, or the whole
call may be written into the content as a `<tool_call>{...}</tool_call>` block (Hermes/Qwen style).
Every backend funnels through here so they all normalize the same way.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from typing import Any

from kernelmosaic.contracts.messages import Message, ToolCall

__all__ = [
    "parse_json_object",
    "make_tool_call",
    "invented_call_id",
    "prior_call_count",
    "TextToolCalls",
    "extract_text_tool_calls",
]

_FENCE = re.compile(r"^\s*```[A-Za-z0-9_-]*\s*\n?(.*?)\n?\s*```\s*$", re.DOTALL)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_BLOCK = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL)
_NAME = re.compile(r"""["']name["']\s*:\s*["']([^"']+)["']""")


def _strip_fence(text: str) -> str:
    match = _FENCE.match(text)
    return match.group(1) if match else text


def _outermost_object(text: str) -> str:
    start, end = text.find("{"), text.rfind("}")
    return text[start : end + 1] if 0 <= start < end else text


def parse_json_object(text: str) -> dict[str, Any]:
    """Decode `text` as a JSON object, repairing common slips; raise ValueError saying why it failed.

    Repairs, in order: code fences, trailing commas, prose around the object, Python literals
    (single quotes, True/None), and a JSON string that itself holds the object (double encoding).
    """
    stripped = text.strip()
    if not stripped:
        return {}
    candidates = [stripped]
    unfenced = _strip_fence(stripped)
    candidates.append(_TRAILING_COMMA.sub(r"\1", unfenced))
    candidates.append(_TRAILING_COMMA.sub(r"\1", _outermost_object(unfenced)))
    first_error = ""
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError as exc:
            first_error = first_error or f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
            continue
        if isinstance(value, str):  # double-encoded: a JSON string whose content is the object
            try:
                value = json.loads(value)
            except json.JSONDecodeError:
                pass
        if isinstance(value, dict):
            return value
        if value is None:  # some servers send "null" for a call without arguments
            return {}
        raise ValueError(f"arguments must be a JSON object, got {type(value).__name__}")
    try:
        # Models trained on Python sometimes write {'x': True}; literal_eval only evaluates literals.
        value = ast.literal_eval(candidates[-1])
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        raise ValueError(first_error) from None
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return json.loads(json.dumps(value, default=str))  # JSON-clean copy
    raise ValueError(first_error)


def make_tool_call(call_id: str, name: str, arguments: object) -> ToolCall:
    """One normalized call; malformed arguments are kept raw with `parse_error` set, never dropped."""
    if isinstance(arguments, dict):
        return ToolCall(id=call_id, name=name, arguments=arguments, raw_arguments=json.dumps(arguments))
    raw = "" if arguments is None else arguments if isinstance(arguments, str) else json.dumps(arguments)
    error = "" if name else "tool call has no function name"
    parsed: dict[str, Any] = {}
    try:
        parsed = parse_json_object(raw)
    except ValueError as exc:
        error = f"{error}; {exc}" if error else str(exc)
    return ToolCall(id=call_id, name=name, arguments=parsed, raw_arguments=raw, parse_error=error)


def invented_call_id(index: int) -> str:
    """Id for a call the server sent without one: stable for a given conversation, unique within it."""
    return f"call_{index}"


def prior_call_count(messages: list[Message]) -> int:
    """Tool calls already in the conversation; new invented ids start after them so none repeats."""
    return sum(len(m.tool_calls) for m in messages if m.role == "assistant")


@dataclass
class TextToolCalls:
    """Tool calls found in a reply's text, and the text left once they are cut out."""

    content: str
    calls: list[ToolCall] = field(default_factory=list)


def _call_from_block(block: str, call_id: str) -> ToolCall:
    try:
        obj = parse_json_object(block)
    except ValueError as exc:
        name_match = _NAME.search(block)
        name = name_match.group(1) if name_match else ""
        return ToolCall(id=call_id, name=name, raw_arguments=block.strip(), parse_error=f"tool call block: {exc}")
    name = obj.get("name")
    arguments = obj.get("arguments", obj.get("parameters", {}))
    if not isinstance(name, str) or not name:
        return ToolCall(id=call_id, name="", raw_arguments=block.strip(), parse_error="tool call block has no name")
    return make_tool_call(call_id, name, arguments)


def extract_text_tool_calls(text: str, first_index: int = 0, tool_names: set[str] | None = None) -> TextToolCalls:
    """Find tool calls written into `text`.

    `<tool_call>` blocks are always recognized (an unclosed last block runs to the end of the text,
    as when generation stopped on the closing tag). When there are none and `tool_names` is given, a
    reply that is nothing but a `{"name": ..., "arguments": ...}` object naming one of those tools
    counts as a call too (Llama-style); ordinary JSON in prose is left alone.
    """
    blocks = list(_BLOCK.finditer(text))
    if blocks:
        calls = [_call_from_block(m.group(1), invented_call_id(first_index + i)) for i, m in enumerate(blocks)]
        return TextToolCalls(content=_BLOCK.sub("", text).strip(), calls=calls)
    bare = _strip_fence(text.strip()).strip()
    if tool_names and bare.startswith("{") and bare.endswith("}"):
        try:
            obj = parse_json_object(bare)
        except ValueError:
            return TextToolCalls(content=text)
        name = obj.get("name")
        if isinstance(name, str) and name in tool_names and ("arguments" in obj or "parameters" in obj):
            arguments = obj.get("arguments", obj.get("parameters"))
            return TextToolCalls(content="", calls=[make_tool_call(invented_call_id(first_index), name, arguments)])
    return TextToolCalls(content=text)
