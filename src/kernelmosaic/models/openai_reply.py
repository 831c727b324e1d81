"""Reading one Chat Completions response body into a `ModelReply`, whatever quirks the server has."""

from __future__ import annotations

import json
from typing import Any

from kernelmosaic.contracts.messages import Message, ModelReply, ToolCall, Usage
from kernelmosaic.models.base import BadResponse
from kernelmosaic.models.toolcalls import extract_text_tool_calls, invented_call_id, make_tool_call

__all__ = ["reply_from_body"]


def _content_text(content: Any) -> str:
    # Some servers send content as a list of parts ({"type": "text", "text": ...}) instead of a string.
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content)


def _reasoning_text(raw_message: dict[str, Any]) -> str:
    # vLLM and SGLang reasoning parsers, DeepSeek and most OpenAI-compatible servers send `reasoning_content`;
    # OpenRouter and newer vLLM send `reasoning` (a string, or parts like content).
    for key in ("reasoning_content", "reasoning"):
        text = _content_text(raw_message.get(key))
        if text:
            return text
    return ""


def _tool_calls(raw_calls: list[Any], first_index: int, source: str) -> list[ToolCall]:
    calls = []
    for i, raw in enumerate(raw_calls):
        if not isinstance(raw, dict):
            raise BadResponse(f"{source}: tool call {i} is a {type(raw).__name__}, not an object")
        # Some servers drop the {"function": {...}} wrapper and put name/arguments on the call itself.
        function = raw.get("function") if isinstance(raw.get("function"), dict) else raw
        call_id = raw.get("id") or invented_call_id(first_index + i)
        name = function.get("name") or ""
        calls.append(make_tool_call(str(call_id), str(name), function.get("arguments")))
    return calls


def _usage(raw: Any, prompt_price: float, completion_price: float) -> Usage:
    if not isinstance(raw, dict):
        return Usage()
    prompt, completion = raw.get("prompt_tokens") or 0, raw.get("completion_tokens") or 0
    if not isinstance(prompt, int) or not isinstance(completion, int):
        return Usage()
    cost = (prompt * prompt_price + completion * completion_price) / 1e6
    return Usage(prompt_tokens=prompt, completion_tokens=completion, cost_usd=cost)


def reply_from_body(
    body: str,
    *,
    first_index: int,
    tool_names: set[str],
    text_tool_calls: bool,
    prompt_price_per_million: float = 0.0,
    completion_price_per_million: float = 0.0,
    source: str = "server",
) -> ModelReply:
    """Parse a response body; `first_index` numbers invented call ids after those already in the conversation.

    Raises `BadResponse`, its message starting with `source`, when the body is not a completion at all
    (not JSON, an error object, no choices).
    """
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        raise BadResponse(f"{source}: response is not JSON ({exc.msg}): {body[:200]!r}") from None
    if not isinstance(data, dict):
        raise BadResponse(f"{source}: response is a {type(data).__name__}, not an object: {body[:200]!r}")
    if data.get("error"):
        raise BadResponse(f"{source}: server returned an error object: {json.dumps(data['error'])[:500]}")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise BadResponse(f"{source}: response has no choices: {body[:200]!r}")
    choice = choices[0]
    raw_message = choice.get("message")
    if not isinstance(raw_message, dict):
        raise BadResponse(f"{source}: first choice has no message: {body[:200]!r}")
    content = _content_text(raw_message.get("content"))
    raw_calls = raw_message.get("tool_calls") or []
    if not isinstance(raw_calls, list):
        raise BadResponse(f"{source}: tool_calls is a {type(raw_calls).__name__}, not a list")
    calls = _tool_calls(raw_calls, first_index, source)
    if not calls and text_tool_calls:
        found = extract_text_tool_calls(content, first_index, tool_names)
        content, calls = found.content, found.calls
    finish = choice.get("finish_reason") or ""
    if calls and finish == "stop":
        finish = "tool_calls"  # servers that fell back to text calls still say "stop"
    return ModelReply(
        message=Message(role="assistant", content=content, reasoning=_reasoning_text(raw_message), tool_calls=calls),
        usage=_usage(data.get("usage"), prompt_price_per_million, completion_price_per_million),
        raw=body,
        finish_reason=str(finish),
    )
