"""The episode loop: query the model, run its tool calls, repeat until an exit exception ends the episode."""

from __future__ import annotations

from kernelmosaic.agent.config import Budgets
from kernelmosaic.agent.exits import (
    BudgetExhausted,
    EpisodeEnd,
    FormatError,
    FormatErrorLimit,
    ModelError,
    Submitted,
)
from kernelmosaic.agent.prompts import NO_TOOL_CALL
from kernelmosaic.agent.tools import Toolbox
from kernelmosaic.contracts.messages import Message, ToolCall
from kernelmosaic.contracts.tool_output import ToolOutput
from kernelmosaic.contracts.tool_specs import TOOL_SPECS
from kernelmosaic.models.base import ModelBackend
from kernelmosaic.runs.recorder import Recorder

_AFTER_SUBMIT = "Not run: the episode ended at submit()."

__all__ = ["Agent"]


class Agent:
    def __init__(self, model: ModelBackend, tools: Toolbox, recorder: Recorder, budgets: Budgets) -> None:
        self.model, self.tools, self.recorder, self.budgets = model, tools, recorder, budgets
        self.state = recorder.state

    async def run(self) -> EpisodeEnd:
        """Run to the end; the returned exit says why it ended (the best solution is in `state.best`)."""
        try:
            await self.resume_step()
            while True:
                await self.step()
        except EpisodeEnd as end:
            for message in end.messages:
                self.recorder.message(message)
            return end

    async def step(self) -> None:
        self.check_budgets()
        try:
            reply = await self.model.complete(list(self.state.messages), TOOL_SPECS)
        except Exception as exc:  # noqa: BLE001 - any backend failure ends the episode, typed by its class
            raise ModelError(f"{type(exc).__name__}: {exc}") from exc
        self.state.turns += 1
        self.recorder.message(reply.message, reply.usage)
        try:
            await self.execute(reply.message.tool_calls)
            self.state.format_errors = 0
        except FormatError as err:
            for message in err.messages:
                self.recorder.message(message)
            self.state.format_errors += 1
            if self.state.format_errors > self.budgets.max_format_errors:
                raise FormatErrorLimit(f"{self.state.format_errors} malformed replies in a row: {err.detail}") from err
        finally:
            self.recorder.save()

    async def resume_step(self) -> None:
        """Run the tool calls of a step that a crash interrupted: the model is not asked again."""
        pending, logged = self.state.pending_calls(), self.state.logged_call_ids()
        for i, call in enumerate(pending):
            if call.id not in logged:
                self.recorder.call(call)
            output = await self.tools.run(call)
            self.recorder.result(call, output)
            if output.submitted:
                self.close_after_submit(pending[i + 1:], logged, output)
        if pending:
            self.recorder.save()

    async def execute(self, calls: list[ToolCall]) -> None:
        if not calls:
            raise FormatError("no tool call", Message(role="user", content=NO_TOOL_CALL))
        malformed = []
        for i, call in enumerate(calls):
            self.recorder.call(call)
            output = await self.tools.run(call)
            self.recorder.result(call, output)
            if output.submitted:
                self.close_after_submit(calls[i + 1:], set(), output)
            if output.format_error:
                malformed.append(call.name)
        if malformed:
            raise FormatError(f"malformed call(s): {', '.join(malformed)}")

    def close_after_submit(self, rest: list[ToolCall], logged: set[str], output: ToolOutput) -> None:
        """Every call of the reply gets its tool message, also those after a submit that ended the episode."""
        for call in rest:
            if call.id not in logged:
                self.recorder.call(call)
            self.recorder.result(call, ToolOutput(_AFTER_SUBMIT))
        self.recorder.save()
        raise Submitted(output.content)

    def check_budgets(self) -> None:
        s, b, totals = self.state, self.budgets, self.recorder.totals()
        limits = [("turns", s.turns, b.max_turns), ("tokens", s.usage.prompt_tokens + s.usage.completion_tokens, b.max_tokens),
                  ("cost_usd", s.usage.cost_usd, b.max_cost_usd), ("wall_seconds", totals.wall_seconds, b.max_wall_seconds),
                  ("gpu_seconds", s.gpu_seconds, b.max_gpu_seconds)]
        for name, used, limit in limits:
            if used >= limit:
                raise BudgetExhausted(f"{name} budget reached ({used:.6g} of {limit:.6g})")
