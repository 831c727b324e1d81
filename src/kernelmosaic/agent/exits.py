"""Every way an episode ends is a small exception carrying the messages to append to the conversation."""

from __future__ import annotations

from typing import ClassVar

from kernelmosaic.contracts.messages import Message

__all__ = ["EpisodeEnd", "Submitted", "BudgetExhausted", "FormatErrorLimit", "ModelError", "FormatError"]


class EpisodeEnd(Exception):
    """Ends the episode; `reason` becomes the trajectory's `exit_reason`."""

    reason: ClassVar[str] = "ended"

    def __init__(self, detail: str = "", *messages: Message) -> None:
        super().__init__(detail)
        self.detail = detail
        self.messages = list(messages)


class Submitted(EpisodeEnd):
    reason = "submitted"


class BudgetExhausted(EpisodeEnd):
    reason = "budget_exhausted"


class FormatErrorLimit(EpisodeEnd):
    reason = "format_error"


class ModelError(EpisodeEnd):
    reason = "model_error"


class FormatError(Exception):
    """A malformed reply the model can recover from: the messages tell it what was wrong."""

    def __init__(self, detail: str, *messages: Message) -> None:
        super().__init__(detail)
        self.detail = detail
        self.messages = list(messages)
