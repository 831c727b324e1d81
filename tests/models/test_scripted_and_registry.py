"""The scripted fake model and the backend registry."""

from __future__ import annotations

import asyncio

import pytest

from kernelmosaic.models import (
    Message,
    ModelBackend,
    ModelConfigError,
    ModelReply,
    ReplayExhausted,
    ScriptedModel,
    ToolCall,
    ToolSpec,
    Usage,
    backend_schemes,
    get_model,
    register_backend,
    register_script,
    registry,
    scripted,
)

TOOLS = [ToolSpec(name="submit", description="Submit.", parameters={"type": "object", "properties": {}})]


def test_outputs_play_in_order_and_functions_see_the_conversation():
    submit = Message(role="assistant", tool_calls=[ToolCall(id="c0", name="submit")])
    model = ScriptedModel(
        [
            ModelReply(message=Message(role="assistant", content="thinking"), usage=Usage(prompt_tokens=5)),
            lambda messages: Message(role="assistant", content=f"seen {len(messages)}"),
            submit,
        ]
    )
    convo = [Message(role="user", content="go")]

    async def run():
        return [await model.complete(convo, TOOLS) for _ in range(3)]

    first, second, third = asyncio.run(run())
    assert first.usage.prompt_tokens == 5 and second.message.content == "seen 1"
    assert third.message.tool_calls[0].name == "submit" and third.finish_reason == "tool_calls"
    assert model.calls == [convo, convo, convo] and model.tools_seen[0] == TOOLS
    with pytest.raises(ReplayExhausted):
        asyncio.run(model.complete(convo, TOOLS))
    assert model.remaining == 0 and model.for_task("t").remaining == 3


def test_non_assistant_output_is_a_config_error():
    model = ScriptedModel([Message(role="user", content="oops")])
    with pytest.raises(ModelConfigError, match="role 'user'"):
        asyncio.run(model.complete([], []))


def test_registered_script_is_found_by_name_and_restarts_per_episode(monkeypatch):
    monkeypatch.setattr(scripted, "_SCRIPTS", dict(scripted._SCRIPTS))  # keep the registration local
    built = []

    def factory():
        built.append(1)
        return [Message(role="assistant", content="one"), Message(role="assistant", content="two")]

    register_script("two-step", factory)
    model = get_model("scripted:two-step")
    assert model.name == "scripted:two-step" and isinstance(model, ModelBackend)
    assert asyncio.run(model.complete([], [])).message.content == "one"
    episode = model.for_task("relu")
    assert asyncio.run(episode.complete([], [])).message.content == "one"
    assert len(built) == 2


def test_builtin_echo_script():
    reply = asyncio.run(get_model("scripted:echo").complete([Message(role="user", content="ping")], []))
    assert reply.message.content == "ping"


def test_unknown_names_and_bad_specs_are_config_errors():
    with pytest.raises(ModelConfigError, match="no script named 'nope'.*echo"):
        get_model("scripted:nope")
    with pytest.raises(ModelConfigError, match="unknown model scheme 'gemini'"):
        get_model("gemini:pro")
    with pytest.raises(ModelConfigError, match="SCHEME:TARGET"):
        get_model("gpt-4o")
    with pytest.raises(ModelConfigError, match=r"unknown key `max_concurency` in \[model\] \(did you mean "
                                               r"`max_concurrency`\?\); known keys: .*base_url"):
        get_model("openai:m", base_url="http://127.0.0.1:9/v1", max_concurency=3)
    with pytest.raises(ModelConfigError, match="no API key"):
        get_model("openai:m", base_url=None, api_key="")


def test_custom_backend_registration(monkeypatch):
    monkeypatch.setattr(registry, "_FACTORIES", dict(registry._FACTORIES))  # keep the registration local
    register_backend("fixed", lambda target, **options: ScriptedModel([Message(role="assistant", content=target)]))
    assert "fixed" in backend_schemes()
    assert asyncio.run(get_model("fixed:hello").complete([], [])).message.content == "hello"


def test_openai_config_reads_environment_and_options_win(monkeypatch):
    from kernelmosaic.models.openai_config import LOCAL_API_KEY, OpenAIConfig

    env = {"OPENAI_BASE_URL": "http://b/v1", "KERNELMOSAIC_OPENAI_BASE_URL": "http://k/v1", "OPENAI_API_KEY": "sk-e"}
    config = OpenAIConfig.from_env("m", env=env)
    assert (config.base_url, config.api_key) == ("http://k/v1", "sk-e")
    assert OpenAIConfig.from_env("m", env={"OPENAI_BASE_URL": "http://b/v1"}).api_key == LOCAL_API_KEY
    assert OpenAIConfig.from_env("m", env=env, base_url="http://o/v1").base_url == "http://o/v1"
    monkeypatch.setenv("KERNELMOSAIC_OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
    model = get_model("openai:m", max_concurrency=3)
    assert model.config.base_url == "http://127.0.0.1:1/v1" and model.config.max_concurrency == 3
    assert model.for_task("any") is model
