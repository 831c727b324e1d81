"""Reasoning from backends, and the export's selection: filters, buckets, ratios, counts."""

from __future__ import annotations

import json

import pytest

from kernelmosaic.models.hf_backend import split_reasoning
from kernelmosaic.models.openai_reply import reply_from_body
from kernelmosaic.sft.buckets import CountsTable, bucket_of, sample_to_ratios
from kernelmosaic.sft.config import BalanceConfig, FilterConfig
from kernelmosaic.sft.filters import apply_filters
from kernelmosaic.sft.metadata import EpisodeMeta


def _body(message: dict) -> str:
    return json.dumps({"choices": [{"message": {"role": "assistant", **message}, "finish_reason": "stop"}]})


@pytest.mark.parametrize("key", ["reasoning_content", "reasoning"])
def test_server_reasoning_fields_fill_message_reasoning(key):
    reply = reply_from_body(_body({"content": "ok", key: "think first"}), first_index=0, tool_names=set(),
                            text_tool_calls=False)
    assert (reply.message.content, reply.message.reasoning) == ("ok", "think first")
    plain = reply_from_body(_body({"content": "ok"}), first_index=0, tool_names=set(), text_tool_calls=False)
    assert plain.message.reasoning == ""


def test_think_blocks_split_from_generated_text():
    assert split_reasoning("<think>\nplan\n</think>\n\n<tool_call>{}</tool_call>") == ("plan", "<tool_call>{}</tool_call>")
    assert split_reasoning("plan</think>answer") == ("plan", "answer")  # the prompt opened the block
    assert split_reasoning("just an answer") == ("", "just an answer")


def _meta(i: int, level: int = 1, speedup: float = 1.2, tokens: int = 100, failure: str = "") -> EpisodeMeta:
    return EpisodeMeta(episode_id=i, run_id=1, task_id=f"t{i}", level=level, category="activation", forms=["nl", "reference"],
                       failure_types=[failure] if failure else [], first_failure=failure, repair_rounds=0,
                       speedup_vs_eager=speedup, speedup_vs_compile=0.0, policy="strict", model="m", origin_model="",
                       device="cpu", turns=3, tool_calls=3, tokens=tokens, tokens_exact=False)


def test_filters_drop_slow_long_and_near_duplicate_keeping_the_fastest():
    metas = [_meta(1, speedup=0.5), _meta(2, tokens=5000), _meta(3, speedup=1.1), _meta(4, speedup=2.0), _meta(5)]
    text = "write_candidate source import torch kernel loop over elements " * 20
    texts = ["a", "b", text, text + " tail", "a completely different trajectory with other words entirely " * 5]
    result = apply_filters(metas, texts, FilterConfig(min_speedup=1.0, max_tokens=1000, near_duplicate_threshold=0.8))
    assert result.dropped == {"min_speedup": [1], "max_tokens": [2], "near_duplicate": [3]}
    assert result.duplicate_of == {3: 4} and result.kept == [3, 4]  # indexes of episodes 4 and 5


def test_buckets_and_sampling_to_ratios():
    metas = [_meta(i, level=1) for i in range(8)] + [_meta(10 + i, level=2, failure="compile_error") for i in range(2)]
    assert bucket_of(metas[0], "gain", [1.0, 1.5, 3.0]) == "1-1.5x" and bucket_of(metas[-1], "failure_type", []) == "compile_error"
    kept = sample_to_ratios(metas, BalanceConfig(by="difficulty", ratios={"L1": 0.5, "L2": 0.5}))
    assert sorted(metas[i].level for i in kept) == [1, 1, 2, 2]  # L2 is the scarce bucket: 2 each
    table = CountsTable()
    table.add_stage("all", metas, [1.0])
    table.add_stage("sampled", [metas[i] for i in kept], [1.0])
    assert table.counts["difficulty"] == {"L1": {"all": 8, "sampled": 2}, "L2": {"all": 2, "sampled": 2}}
    assert "| difficulty | L1 | 8 | 2 |" in table.markdown()
    with pytest.raises(ValueError, match="ratios"):
        BalanceConfig(by="category")
