"""`scripted:NAME` — a fake model that plays back a list of outputs, for tests that drive the real agent loop.

An output is a `ModelReply`, an assistant `Message`, or a function of the conversation so far that
returns either. Scripts are registered by name so a spec string can select one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from kernelmosaic.contracts.messages import Message, ModelReply, ToolSpec
from kernelmosaic.models.base import ModelConfigError, ReplayExhausted

__all__ = ["ScriptOutput", "ScriptedModel", "register_script", "script_names", "scripted_model"]

ScriptOutput = ModelReply | Message | Callable[[list[Message]], ModelReply | Message]
ScriptFactory = Callable[[], Sequence[ScriptOutput]]

_SCRIPTS: dict[str, ScriptFactory] = {}


def _as_reply(output: ModelReply | Message, position: int) -> ModelReply:
    if isinstance(output, ModelReply):
        return output
    if isinstance(output, Message):
        if output.role != "assistant":
            raise ModelConfigError(f"scripted output {position} has role {output.role!r}, expected 'assistant'")
        return ModelReply(message=output, raw=output.content, finish_reason="tool_calls" if output.tool_calls else "stop")
    raise ModelConfigError(f"scripted output {position} is a {type(output).__name__}, not a ModelReply or Message")


class ScriptedModel:
    """Returns its outputs in order, one per `complete` call; raises `ReplayExhausted` after the last."""

    def __init__(self, outputs: Sequence[ScriptOutput], name: str = "scripted") -> None:
        self.name = name
        self._outputs = tuple(outputs)
        self._next = 0
        self.calls: list[list[Message]] = []
        """The conversation seen by each `complete` call, for tests to assert on."""
        self.tools_seen: list[list[ToolSpec]] = []
        """The tools offered with each call."""
        self.origin_model = ""
        """Who wrote the outputs when it is not this backend (hand-written demonstrations say so)."""

    @property
    def remaining(self) -> int:
        return len(self._outputs) - self._next

    def for_task(self, task_id: str) -> ScriptedModel:
        return ScriptedModel(self._outputs, self.name)  # each episode starts the script from the top

    async def complete(self, messages: list[Message], tools: list[ToolSpec]) -> ModelReply:
        if self._next >= len(self._outputs):
            raise ReplayExhausted(f"{self.name}: script has no output left after {len(self._outputs)} replies")
        position, output = self._next, self._outputs[self._next]
        self._next += 1
        self.calls.append(list(messages))
        self.tools_seen.append(list(tools))
        if callable(output) and not isinstance(output, ModelReply | Message):
            output = output(list(messages))
        return _as_reply(output, position)


def register_script(name: str, factory: ScriptFactory) -> None:
    """Make `scripted:NAME` play the outputs `factory()` returns (called anew for each model and episode)."""
    if not name or ":" in name:
        raise ModelConfigError(f"script name {name!r} must be non-empty and contain no ':'")
    _SCRIPTS[name] = factory


def script_names() -> list[str]:
    return sorted(_SCRIPTS)


class _RegisteredScript(ScriptedModel):
    """A scripted model that rebuilds its outputs from the registered factory for every episode."""

    def __init__(self, script: str, factory: ScriptFactory) -> None:
        super().__init__(factory(), name=f"scripted:{script}")
        self._script, self._factory = script, factory

    def for_task(self, task_id: str) -> ScriptedModel:
        return _RegisteredScript(self._script, self._factory)


def scripted_model(script: str) -> ScriptedModel:
    """The model for spec `scripted:SCRIPT`; raises `ModelConfigError` naming the known scripts if unknown."""
    factory = _SCRIPTS.get(script)
    if factory is None:
        known = ", ".join(script_names()) or "none"
        raise ModelConfigError(f"no script named {script!r} is registered (known: {known})")
    return _RegisteredScript(script, factory)


def _echo(messages: list[Message]) -> Message:
    last_user = next((m.content for m in reversed(messages) if m.role == "user"), "")
    return Message(role="assistant", content=last_user)


# Shipped so a fresh install can exercise the whole pipeline without a network: it repeats the
# last user message once and then stops (a second call raises ReplayExhausted).
register_script("echo", lambda: [_echo])
