"""The OpenAI-compatible backend against a local Chat Completions server: replies, quirks, retries, limits."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from fake_chat_server import FakeChatServer, completion

from kernelmosaic.models import (
    BadResponse,
    Message,
    ModelUnavailable,
    RateLimited,
    Timeout,
    ToolCall,
    ToolSpec,
    Usage,
    get_model,
)
from kernelmosaic.models.openai_backend import OpenAIBackend

COMPILE = ToolSpec(
    name="compile",
    description="Compile a candidate.",
    parameters={"type": "object", "properties": {"source": {"type": "string"}}, "required": ["source"]},
)
USER = [Message(role="system", content="You write CUDA."), Message(role="user", content="Write a ReLU kernel.")]


def backend(server: FakeChatServer, **options) -> OpenAIBackend:
    options = {"base_url": server.base_url, "api_key": "sk-test", "backoff_initial_s": 0.01, **options}
    model = get_model("openai:test-model", **options)
    assert isinstance(model, OpenAIBackend)
    return model


def call(name: str, arguments, call_id: str | None = "call_abc") -> dict:
    out = {"type": "function", "function": {"name": name, "arguments": arguments}}
    if call_id is not None:
        out["id"] = call_id
    return out


def test_reply_with_tool_calls_usage_and_cost(chat_server):
    chat_server.push(body=completion("Compiling.", [call("compile", '{"source": "x"}')], 1000, 500, "tool_calls"))
    model = backend(chat_server, prompt_price_per_million=2.0, completion_price_per_million=8.0, max_tokens=64)
    reply = asyncio.run(model.complete(USER, [COMPILE]))
    assert reply.message.role == "assistant" and reply.message.content == "Compiling."
    assert reply.message.tool_calls == [
        ToolCall(id="call_abc", name="compile", arguments={"source": "x"}, raw_arguments='{"source": "x"}')
    ]
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (1000, 500)
    assert reply.usage.cost_usd == pytest.approx(1000 * 2.0 / 1e6 + 500 * 8.0 / 1e6)
    assert reply.finish_reason == "tool_calls" and json.loads(reply.raw)["id"] == "chatcmpl-test"
    sent = chat_server.requests[0]
    assert sent["model"] == "test-model" and sent["tools"] == [COMPILE.openai_format()]
    assert sent["max_tokens"] == 64 and "temperature" not in sent
    assert [m["role"] for m in sent["messages"]] == ["system", "user"]
    assert chat_server.headers[0]["authorization"] == "Bearer sk-test"


def test_history_with_tool_calls_is_sent_in_chat_completions_form(chat_server):
    history = USER + [
        Message(role="assistant", tool_calls=[ToolCall(id="c1", name="compile", arguments={"source": "y"})]),
        Message(role="tool", tool_call_id="c1", name="compile", content="ok"),
    ]
    asyncio.run(backend(chat_server).complete(history, [COMPILE]))
    assistant, tool = chat_server.requests[0]["messages"][2:]
    assert assistant["tool_calls"][0]["function"] == {"name": "compile", "arguments": '{"source": "y"}'}
    assert tool == {"role": "tool", "tool_call_id": "c1", "content": "ok"}


def test_429_is_retried_after_retry_after_and_usage_sums(chat_server):
    chat_server.push(status=429, body='{"error": {"message": "slow down"}}', headers={"Retry-After": "1"})
    chat_server.push(body=completion("first", prompt_tokens=10, completion_tokens=3))
    chat_server.push(body=completion("second", prompt_tokens=20, completion_tokens=4))
    model = backend(chat_server)
    started = time.monotonic()
    first = asyncio.run(model.complete(USER, []))
    assert time.monotonic() - started >= 0.9  # waited as the server asked, not the 10 ms backoff
    second = asyncio.run(model.complete(USER, []))
    assert (first.message.content, second.message.content) == ("first", "second")
    assert first.usage == Usage(prompt_tokens=10, completion_tokens=3)
    assert model.stats.requests == 3 and model.stats.retries == 1 and model.stats.replies == 2
    assert model.stats.usage == Usage(prompt_tokens=30, completion_tokens=7)


def test_500_then_success_is_retried(chat_server):
    chat_server.push(status=500, body='{"error": {"message": "boom"}}')
    reply = asyncio.run((model := backend(chat_server)).complete(USER, []))
    assert reply.message.content == "hello"
    assert model.stats.retries == 1 and model.stats.failures == 0


def test_persistent_5xx_raises_unavailable_after_max_retries(chat_server):
    chat_server.default.status, chat_server.default.body = 503, '{"error": {"message": "overloaded"}}'
    model = backend(chat_server, max_retries=2)
    with pytest.raises(ModelUnavailable) as info:
        asyncio.run(model.complete(USER, []))
    assert info.value.status_code == 503 and info.value.retryable
    assert model.stats.requests == 3 and model.stats.failures == 1


def test_persistent_429_raises_rate_limited(chat_server):
    chat_server.default.status, chat_server.default.body = 429, '{"error": {"message": "quota"}}'
    with pytest.raises(RateLimited):
        asyncio.run(backend(chat_server, max_retries=1).complete(USER, []))
    assert len(chat_server.requests) == 2


def test_400_is_not_retried(chat_server):
    chat_server.push(status=400, body='{"error": {"message": "context too long"}}')
    model = backend(chat_server)
    with pytest.raises(BadResponse, match="context too long"):
        asyncio.run(model.complete(USER, []))
    assert model.stats.requests == 1


def test_body_that_is_not_a_completion_is_bad_response(chat_server):
    chat_server.push(body='{"object": "list", "data": []}')
    with pytest.raises(BadResponse, match="no choices"):
        asyncio.run(backend(chat_server).complete(USER, []))


def test_malformed_arguments_are_kept_raw_with_parse_error(chat_server):
    chat_server.push(body=completion(None, [call("compile", '{"source": "__global__ void k(')]))
    (tool_call,) = asyncio.run(backend(chat_server).complete(USER, [COMPILE])).message.tool_calls
    assert tool_call.name == "compile" and tool_call.arguments == {}
    assert tool_call.raw_arguments == '{"source": "__global__ void k('
    assert "invalid JSON" in tool_call.parse_error


def test_fenced_arguments_with_trailing_comma_are_repaired(chat_server):
    chat_server.push(body=completion(None, [call("compile", '```json\n{"source": "x",}\n```')]))
    (tool_call,) = asyncio.run(backend(chat_server).complete(USER, [COMPILE])).message.tool_calls
    assert tool_call.arguments == {"source": "x"} and tool_call.parse_error == ""


def test_arguments_sent_as_an_object(chat_server):
    chat_server.push(body=completion(None, [call("compile", {"source": "x"})]))
    (tool_call,) = asyncio.run(backend(chat_server).complete(USER, [COMPILE])).message.tool_calls
    assert tool_call.arguments == {"source": "x"} and json.loads(tool_call.raw_arguments) == {"source": "x"}


def test_missing_ids_are_invented_after_the_calls_already_in_the_conversation(chat_server):
    chat_server.push(body=completion(None, [call("compile", "{}", None), call("compile", "{}", None)]))
    history = USER + [
        Message(role="assistant", tool_calls=[ToolCall(id="call_0", name="compile")]),
        Message(role="tool", tool_call_id="call_0", content="error"),
    ]
    reply = asyncio.run(backend(chat_server).complete(history, [COMPILE]))
    assert [c.id for c in reply.message.tool_calls] == ["call_1", "call_2"]


def test_tool_calls_written_as_text_are_parsed(chat_server):
    text = 'Let me build it.\n<tool_call>\n{"name": "compile", "arguments": {"source": "x"}}\n</tool_call>'
    chat_server.push(body=completion(text))
    reply = asyncio.run(backend(chat_server).complete(USER, [COMPILE]))
    assert reply.message.content == "Let me build it."
    assert [(c.id, c.name, c.arguments) for c in reply.message.tool_calls] == [("call_0", "compile", {"source": "x"})]
    assert reply.finish_reason == "tool_calls" and "<tool_call>" in reply.raw


def test_text_tool_calls_can_be_turned_off(chat_server):
    text = '<tool_call>{"name": "compile", "arguments": {}}</tool_call>'
    chat_server.push(body=completion(text))
    reply = asyncio.run(backend(chat_server, text_tool_calls=False).complete(USER, [COMPILE]))
    assert reply.message.tool_calls == [] and reply.message.content == text


def test_timeout_raises_typed_error(chat_server):
    chat_server.push(body=completion("late"), delay_s=5.0)
    model = backend(chat_server, timeout_s=0.2, max_retries=0)
    started = time.monotonic()
    with pytest.raises(Timeout):
        asyncio.run(model.complete(USER, []))
    assert time.monotonic() - started < 3.0  # gave up long before the server answered (slack for a busy CI)


def test_timeout_is_retried_like_other_transient_failures(chat_server):
    chat_server.push(body=completion("late"), delay_s=5.0)
    chat_server.push(body=completion("on time"))
    model = backend(chat_server, timeout_s=0.2, max_retries=1)
    assert asyncio.run(model.complete(USER, [])).message.content == "on time"
    assert model.stats.retries == 1 and model.stats.failures == 0


def test_connection_refused_is_unavailable(chat_server):
    url = chat_server.base_url
    chat_server.httpd.shutdown()
    chat_server.httpd.server_close()
    model = get_model("openai:m", base_url=url, max_retries=1, backoff_initial_s=0.01)
    with pytest.raises(ModelUnavailable, match="cannot reach") as caught:
        asyncio.run(model.complete(USER, []))
    assert model.stats.requests == 2
    assert "refused" in str(caught.value).lower(), caught.value  # the cause, not only the SDK's "Connection error."


def test_concurrency_limit_holds_across_64_requests(chat_server):
    chat_server.default.delay_s = 0.03
    model = backend(chat_server, max_concurrency=4)

    async def many():
        episodes = [model.for_task(f"task-{i}") for i in range(64)]
        return await asyncio.gather(*(m.complete(USER, []) for m in episodes))

    replies = asyncio.run(many())
    assert len(replies) == 64 and len(chat_server.requests) == 64
    assert 2 <= chat_server.max_in_flight <= 4
    assert model.stats.max_in_flight <= 4 and model.stats.replies == 64
