"""Replaying recorded trajectories: order, usage, exhaustion, choosing by task, bad files."""

from __future__ import annotations

import asyncio
import json

import pytest

from kernelmosaic.contracts.trajectory import MessageEvent, ToolCallEvent, ToolResultEvent, Trajectory
from kernelmosaic.models import (
    Message,
    ModelConfigError,
    ModelUnavailable,
    ReplayExhausted,
    ToolCall,
    Usage,
    get_model,
)
from kernelmosaic.models import replay as replay_module

PROMPT = [Message(role="user", content="write relu")]


def recorded(task_id: str, final_text: str) -> Trajectory:
    call = ToolCall(id="call_0", name="compile", arguments={"source": "k"}, raw_arguments='{"source": "k"}')
    return Trajectory(
        task_id=task_id,
        model="openai:some-model",
        events=[
            MessageEvent(step=0, message=Message(role="system", content="sys")),
            MessageEvent(step=0, message=Message(role="user", content="write relu")),
            MessageEvent(
                step=1,
                message=Message(role="assistant", content="compiling", tool_calls=[call]),
                usage=Usage(prompt_tokens=100, completion_tokens=20, cost_usd=0.01),
            ),
            ToolCallEvent(step=1, call=call),
            ToolResultEvent(step=1, call_id="call_0", name="compile", content="ok"),
            MessageEvent(step=1, message=Message(role="tool", tool_call_id="call_0", content="ok")),
            MessageEvent(
                step=2,
                message=Message(role="assistant", content=final_text),
                usage=Usage(prompt_tokens=150, completion_tokens=5),
            ),
        ],
    )


def replies(model, count: int):
    async def run():
        return [await model.complete(PROMPT, []) for _ in range(count)]

    return asyncio.run(run())


def test_replays_assistant_messages_in_order_then_raises(tmp_path):
    path = tmp_path / "one.json"
    path.write_text(recorded("relu", "done").to_json())
    model = get_model(f"replay:{path}")
    first, second = replies(model, 2)
    assert first.message.tool_calls[0].name == "compile" and first.finish_reason == "tool_calls"
    assert first.usage == Usage(prompt_tokens=100, completion_tokens=20, cost_usd=0.01)
    assert second.message.content == "done" and second.usage.prompt_tokens == 150
    with pytest.raises(ReplayExhausted, match="no reply left after 2"):
        asyncio.run(model.complete(PROMPT, []))


def test_jsonl_of_several_tasks_is_chosen_by_task(tmp_path):
    path = tmp_path / "many.jsonl"
    lines = [recorded("relu", "relu done"), recorded("gelu", "gelu done 1"), recorded("gelu", "gelu done 2")]
    path.write_text("\n".join(t.model_dump_json(by_alias=True) for t in lines) + "\n")
    root = get_model(f"replay:{path}")
    with pytest.raises(ModelConfigError, match="holds 3 trajectories"):
        asyncio.run(root.complete(PROMPT, []))
    assert replies(root.for_task("relu"), 2)[1].message.content == "relu done"
    # Two recordings of one task are handed to successive episodes in turn.
    assert [replies(root.for_task("gelu"), 2)[1].message.content for _ in range(3)] == [
        "gelu done 1",
        "gelu done 2",
        "gelu done 1",
    ]
    with pytest.raises(ModelUnavailable, match="no recorded trajectory for task 'swish'"):
        root.for_task("swish")
    assert replies(get_model(f"replay:{path}", task_id="gelu"), 2)[1].message.content == "gelu done 1"


def test_per_task_replayers_are_independent(tmp_path):
    path = tmp_path / "one.json"
    path.write_text(recorded("relu", "done").to_json())
    root = get_model(f"replay:{path}")
    a, b = root.for_task("relu"), root.for_task("relu")
    replies(a, 2)
    assert replies(b, 1)[0].message.content == "compiling"


def test_json_list_of_trajectories_is_read(tmp_path):
    path = tmp_path / "list.json"
    path.write_text(json.dumps([recorded("a", "x").model_dump(by_alias=True), recorded("b", "y").model_dump(by_alias=True)]))
    assert replies(get_model(f"replay:{path}").for_task("b"), 2)[1].message.content == "y"


def test_bad_files_name_the_file_and_line(tmp_path):
    with pytest.raises(ModelConfigError, match="does not exist"):
        get_model(f"replay:{tmp_path / 'missing.json'}")
    bad_json = tmp_path / "bad.jsonl"
    bad_json.write_text(recorded("a", "x").model_dump_json(by_alias=True) + "\n{not json\n")
    with pytest.raises(ModelConfigError, match=r"bad.jsonl line 2: invalid JSON"):
        get_model(f"replay:{bad_json}")
    wrong_shape = tmp_path / "wrong.json"
    wrong_shape.write_text('{"task": "a"}')
    with pytest.raises(ModelConfigError, match="wrong.json: not a kernelmosaic trajectory"):
        get_model(f"replay:{wrong_shape}")
    with pytest.raises(ModelConfigError, match="unknown options"):
        get_model(f"replay:{bad_json}", temperature=0.5)


def test_bundled_name_reads_the_packaged_file_or_says_it_is_missing(tmp_path, monkeypatch):
    missing = tmp_path / "bundled" / "trajectories.jsonl"
    monkeypatch.setattr(replay_module, "bundled_path", lambda: missing)
    with pytest.raises(ModelConfigError, match="no bundled trajectories"):
        get_model("replay:bundled")
    missing.parent.mkdir()
    missing.write_text(recorded("relu", "bundled done").model_dump_json(by_alias=True) + "\n")
    model = get_model("replay:bundled")
    assert model.name == "replay:bundled"
    assert replies(model.for_task("relu"), 2)[1].message.content == "bundled done"
