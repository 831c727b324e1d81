"""The one interface every model backend implements, and the typed errors a backend may raise.

A backend never returns None to mean "failed": it raises a `ModelError` subclass whose `kind`
is a short JSON-clean tag the agent can store as an exit reason.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from kernelmosaic.contracts.messages import Message, ModelReply, ToolSpec

__all__ = [
    "ModelBackend",
    "ModelError",
    "RateLimited",
    "Timeout",
    "BadResponse",
    "ModelUnavailable",
    "ModelConfigError",
    "ReplayExhausted",
]


@runtime_checkable
class ModelBackend(Protocol):
    """Something that answers a conversation with one assistant reply."""

    name: str
    """The spec it was built from, e.g. `openai:gpt-4o`; recorded in trajectories."""

    async def complete(self, messages: list[Message], tools: list[ToolSpec]) -> ModelReply:
        """Answer `messages`, offering `tools`; raise a `ModelError` on failure."""
        ...

    def for_task(self, task_id: str) -> ModelBackend:
        """The backend one episode of `task_id` should use.

        Stateless backends return themselves (so limits such as a concurrency cap stay shared);
        replay and scripted backends return a fresh cursor over their recorded outputs.
        """
        ...


class ModelError(Exception):
    """A model backend failed; `kind` tags the failure, `retryable` says whether trying again may help."""

    kind = "model_error"
    retryable = False

    def __init__(
        self, message: str, *, status_code: int = 0, retry_after_s: float = 0.0, retryable: bool | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        if retryable is not None:  # e.g. a 5xx is worth retrying, a 401 is not: both are "unavailable"
            self.retryable = retryable
        self.status_code = status_code
        """HTTP status when the failure came from a server, else 0."""
        self.retry_after_s = retry_after_s
        """Delay the server asked for (Retry-After), else 0."""

    def to_dict(self) -> dict[str, object]:
        """A JSON-clean description, for results and trajectories."""
        return {"kind": self.kind, "message": self.message, "status_code": self.status_code}


class RateLimited(ModelError):
    """The server answered 429 (after retries, when raised to the caller)."""

    kind = "rate_limited"
    retryable = True


class Timeout(ModelError):
    """The request did not finish within the per-request timeout."""

    kind = "timeout"
    retryable = True


class BadResponse(ModelError):
    """The server answered, but not with a usable completion (4xx other than 429, or an unreadable body)."""

    kind = "bad_response"


class ModelUnavailable(ModelError):
    """The model cannot be reached or loaded: connection refused, 5xx, missing files, auth failure."""

    kind = "unavailable"


class ModelConfigError(ModelError):
    """The spec or options given to `get_model` are unusable (unknown scheme, bad option, missing file)."""

    kind = "config"


class ReplayExhausted(ModelError):
    """A replay or scripted backend was asked for more replies than it holds."""

    kind = "replay_exhausted"
