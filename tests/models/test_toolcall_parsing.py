"""The shared tool-call parser and the retry timing, without any server."""

from __future__ import annotations

import email.utils
import time

import pytest

from kernelmosaic.models.retry import backoff_delay, retry_after_seconds
from kernelmosaic.models.toolcalls import extract_text_tool_calls, make_tool_call, parse_json_object


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ("", {}),
        ("null", {}),
        ('```json\n{"a": [1, 2,],}\n```', {"a": [1, 2]}),
        ('Here you go: {"a": "b"} hope it helps', {"a": "b"}),
        ("{'a': True, 'b': None}", {"a": True, "b": None}),
        ('"{\\"a\\": 2}"', {"a": 2}),
    ],
)
def test_parse_json_object_repairs_common_slips(text, expected):
    assert parse_json_object(text) == expected


@pytest.mark.parametrize(
    ("text", "reason"),
    [('{"a": ', "invalid JSON"), ("[1, 2]", "must be a JSON object"), ("not json at all", "invalid JSON")],
)
def test_parse_json_object_says_why_it_failed(text, reason):
    with pytest.raises(ValueError, match=reason):
        parse_json_object(text)


def test_make_tool_call_keeps_malformed_arguments_raw():
    call = make_tool_call("c", "compile", '{"source": "unterminated')
    assert call.arguments == {} and call.raw_arguments == '{"source": "unterminated' and call.parse_error


def test_make_tool_call_without_a_name_is_flagged():
    assert "no function name" in make_tool_call("c", "", "{}").parse_error


def test_several_blocks_become_calls_with_ids_after_first_index():
    text = (
        "Plan first.\n"
        '<tool_call>{"name": "compile", "arguments": {"source": "a"}}</tool_call>\n'
        '<tool_call>{"name": "test", "parameters": {"n": 3}}</tool_call>'
    )
    found = extract_text_tool_calls(text, first_index=4)
    assert found.content == "Plan first."
    assert [(c.id, c.name, c.arguments) for c in found.calls] == [
        ("call_4", "compile", {"source": "a"}),
        ("call_5", "test", {"n": 3}),
    ]


def test_unclosed_last_block_runs_to_the_end():
    found = extract_text_tool_calls('<tool_call>\n{"name": "submit", "arguments": {}}\n')
    assert [(c.name, c.arguments, c.parse_error) for c in found.calls] == [("submit", {}, "")]


def test_malformed_block_keeps_its_text_and_recovers_the_name():
    (call,) = extract_text_tool_calls('<tool_call>{"name": "compile", "arguments": {"source": "x</tool_call>').calls
    assert call.name == "compile" and call.arguments == {}
    assert call.raw_arguments.startswith('{"name": "compile"') and "tool call block" in call.parse_error


def test_block_arguments_given_as_a_string_are_decoded():
    (call,) = extract_text_tool_calls('<tool_call>{"name": "t", "arguments": "{\\"k\\": 1}"}</tool_call>').calls
    assert call.arguments == {"k": 1}


def test_bare_call_object_counts_only_for_offered_tools():
    text = '{"name": "compile", "arguments": {"source": "x"}}'
    assert extract_text_tool_calls(text, tool_names={"compile"}).calls[0].arguments == {"source": "x"}
    assert extract_text_tool_calls(text, tool_names={"other"}).calls == []
    assert extract_text_tool_calls(text).calls == []


def test_prose_with_json_is_left_alone():
    text = 'The config is {"name": "compile", "arguments": {}} as shown.'
    found = extract_text_tool_calls(text, tool_names={"compile"})
    assert found.calls == [] and found.content == text


def test_backoff_doubles_with_jitter_and_respects_caps():
    for retry, ceiling in [(0, 1.0), (1, 2.0), (3, 8.0), (10, 30.0)]:
        delays = [backoff_delay(retry, 1.0, 30.0) for _ in range(50)]
        assert all(ceiling / 2 <= d <= ceiling for d in delays)
        assert len(set(delays)) > 1  # jittered, not constant
    assert backoff_delay(0, 1.0, 30.0, retry_after_s=7.0) == 7.0
    assert backoff_delay(0, 1.0, 30.0, retry_after_s=90.0) == 30.0


def test_retry_after_forms():
    assert retry_after_seconds({"retry-after": "3"}) == 3.0
    assert retry_after_seconds({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    in_five = email.utils.formatdate(time.time() + 5, usegmt=True)
    assert 3.0 <= retry_after_seconds({"retry-after": in_five}) <= 5.0
    assert retry_after_seconds({"retry-after": "soon"}) == 0.0
    assert retry_after_seconds(None) == 0.0
