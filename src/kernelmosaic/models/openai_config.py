"""Typed configuration of the OpenAI-compatible backend, read from the environment and overridable by options."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kernelmosaic.config import describe_error
from kernelmosaic.models.base import ModelConfigError

__all__ = ["OpenAIConfig", "LOCAL_API_KEY"]

LOCAL_API_KEY = "EMPTY"
"""Key sent when a base URL is set but no key is: vLLM and SGLang accept any key unless started with one."""


class OpenAIConfig(BaseModel):
    """How to reach and drive one model on an OpenAI-compatible Chat Completions server."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    model: str = Field(min_length=1)
    """Model name sent with each request (the part after `openai:` in the spec)."""
    base_url: str | None = None
    """Server root such as `http://127.0.0.1:8000/v1`; None means the SDK's default (api.openai.com)."""
    api_key: str = ""
    """Bearer key; empty is allowed only with a base URL (local servers)."""
    max_concurrency: int = Field(8, ge=1)
    """Requests in flight at once through this backend, across all episodes that share it."""
    max_retries: int = Field(6, ge=0)
    """Retries after a 429, a 5xx, a timeout or a connection error; 0 means a single attempt."""
    timeout_s: float = Field(300.0, gt=0)
    """Limit for one request, from send to the last byte of the reply."""
    backoff_initial_s: float = Field(1.0, ge=0)
    """Delay before the first retry; it doubles with each further retry."""
    backoff_max_s: float = Field(60.0, ge=0)
    """Longest delay between two attempts, also the cap on a server's Retry-After."""
    temperature: float | None = Field(None, ge=0)
    """Sampling temperature; None leaves the server's default."""
    max_tokens: int | None = Field(None, ge=1)
    """Cap on completion tokens per reply; None leaves the server's default."""
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    """Request field carrying `max_tokens`: OpenAI's reasoning models accept only `max_completion_tokens`."""
    prompt_price_per_million: float = Field(0.0, ge=0)
    """USD per million prompt tokens, for `Usage.cost_usd`."""
    completion_price_per_million: float = Field(0.0, ge=0)
    """USD per million completion tokens, for `Usage.cost_usd`."""
    extra_body: dict[str, Any] = Field(default_factory=dict)
    """Extra request fields for a server that understands them, e.g. `{"chat_template_kwargs": {...}}` for vLLM."""
    text_tool_calls: bool = True
    """Parse `<tool_call>` blocks (and bare call objects) from the content when the server returned no tool calls."""

    @classmethod
    def from_env(cls, model: str, env: Mapping[str, str] | None = None, **overrides: Any) -> OpenAIConfig:
        """Read `KERNELMOSAIC_OPENAI_BASE_URL` (else `OPENAI_BASE_URL`) and `OPENAI_API_KEY`; options win.

        Raises `ModelConfigError` naming the bad option when the result does not validate.
        """
        env = os.environ if env is None else env
        values: dict[str, Any] = {"model": model}
        base_url = env.get("KERNELMOSAIC_OPENAI_BASE_URL") or env.get("OPENAI_BASE_URL")
        if base_url:
            values["base_url"] = base_url
        if env.get("OPENAI_API_KEY"):
            values["api_key"] = env["OPENAI_API_KEY"]
        values.update(overrides)
        try:
            config = cls(**values)
        except ValidationError as exc:
            raise ModelConfigError(describe_error(exc, cls, "model", f"openai:{model}")) from None
        if not config.api_key:
            if config.base_url is None:
                raise ModelConfigError(
                    f"openai:{model}: no API key; set OPENAI_API_KEY, or point KERNELMOSAIC_OPENAI_BASE_URL "
                    "at a local OpenAI-compatible server"
                )
            config = config.model_copy(update={"api_key": LOCAL_API_KEY})
        return config
