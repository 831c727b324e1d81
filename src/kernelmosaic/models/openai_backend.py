"""`openai:MODEL` — any OpenAI-compatible Chat Completions server (OpenAI, vLLM, SGLang) through the official SDK.

The SDK's own retries are off: this module's policy (backoff with jitter, Retry-After, a shared
concurrency cap) is the one in effect, so its counts in `stats` are the true ones.
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Any

import openai
from pydantic import BaseModel, ConfigDict, Field

from kernelmosaic.contracts.messages import Message, ModelReply, ToolSpec, Usage
from kernelmosaic.models.base import BadResponse, ModelError, ModelUnavailable, RateLimited, Timeout
from kernelmosaic.models.chat_format import to_openai_messages
from kernelmosaic.models.openai_config import OpenAIConfig
from kernelmosaic.models.openai_reply import reply_from_body
from kernelmosaic.models.retry import backoff_delay, retry_after_seconds
from kernelmosaic.models.toolcalls import prior_call_count

__all__ = ["OpenAIBackend", "BackendStats"]

log = logging.getLogger(__name__)

_RETRYABLE_STATUS = {408, 409}  # request timeout and conflict/lock: transient on OpenAI and proxies


class BackendStats(BaseModel):
    """What a remote backend has done since it was made; shared by every episode using it."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    requests: int = 0
    """HTTP attempts sent, retries included."""
    replies: int = 0
    """Completions returned to callers."""
    retries: int = 0
    """Attempts repeated after a retryable failure."""
    failures: int = 0
    """`complete` calls that ended in a raised `ModelError`."""
    usage: Usage = Field(default_factory=Usage)
    """Tokens and cost summed over all replies."""
    max_in_flight: int = 0
    """Most requests seen in flight at once (never above `max_concurrency`)."""


class OpenAIBackend:
    """Chat Completions backend; one instance is meant to be shared by all episodes of a run."""

    def __init__(self, config: OpenAIConfig, name: str = "") -> None:
        self.config = config
        self.name = name or f"openai:{config.model}"
        self.stats = BackendStats()
        self._client: openai.AsyncOpenAI | None = None
        self._semaphore: asyncio.Semaphore | None = None  # made with the client, in the loop that uses it
        self._loop: asyncio.AbstractEventLoop | None = None
        self._in_flight = 0

    def for_task(self, task_id: str) -> OpenAIBackend:
        return self  # stateless per episode; sharing keeps one concurrency cap for the whole run

    async def complete(self, messages: list[Message], tools: list[ToolSpec]) -> ModelReply:
        request = self._request(messages, tools)
        tool_names = {t.name for t in tools}
        retry = 0
        while True:
            try:
                body = await self._send(request)
                reply = reply_from_body(
                    body,
                    first_index=prior_call_count(messages),
                    tool_names=tool_names,
                    text_tool_calls=self.config.text_tool_calls,
                    prompt_price_per_million=self.config.prompt_price_per_million,
                    completion_price_per_million=self.config.completion_price_per_million,
                    source=self.name,
                )
            except ModelError as err:
                if not err.retryable or retry >= self.config.max_retries:
                    self.stats.failures += 1
                    raise
                delay = backoff_delay(
                    retry, self.config.backoff_initial_s, self.config.backoff_max_s, err.retry_after_s
                )
                log.warning("%s; retry %d/%d in %.2fs", err, retry + 1, self.config.max_retries, delay)
                self.stats.retries += 1
                retry += 1
                await asyncio.sleep(delay)  # outside the semaphore: a waiting retry holds no slot
                continue
            self.stats.replies += 1
            self.stats.usage = self.stats.usage + reply.usage
            return reply

    async def aclose(self) -> None:
        """Close the HTTP connections; the backend can still be used afterwards (it reconnects)."""
        if self._client is not None:
            await self._client.close()
            self._client = None

    def _request(self, messages: list[Message], tools: list[ToolSpec]) -> dict[str, Any]:
        request: dict[str, Any] = {"model": self.config.model, "messages": to_openai_messages(messages)}
        if tools:  # some servers reject an empty tools list
            request["tools"] = [t.openai_format() for t in tools]
        if self.config.temperature is not None:
            request["temperature"] = self.config.temperature
        if self.config.max_tokens is not None:
            request[self.config.max_tokens_field] = self.config.max_tokens
        if self.config.extra_body:
            request["extra_body"] = self.config.extra_body
        return request

    def _client_for_loop(self) -> openai.AsyncOpenAI:
        # The HTTP pool and the semaphore belong to one event loop; a new loop (another asyncio.run)
        # gets fresh ones instead of failing on the old loop's closed connections.
        loop = asyncio.get_running_loop()
        if self._client is None or loop is not self._loop:
            self._loop = loop
            self._semaphore = asyncio.Semaphore(self.config.max_concurrency)
            self._client = openai.AsyncOpenAI(
                api_key=self.config.api_key,
                base_url=self.config.base_url,
                timeout=self.config.timeout_s,
                max_retries=0,
            )
        return self._client

    async def _send(self, request: dict[str, Any]) -> str:
        client = self._client_for_loop()
        assert self._semaphore is not None  # set together with the client
        async with self._semaphore:
            self._in_flight += 1
            self.stats.max_in_flight = max(self.stats.max_in_flight, self._in_flight)
            self.stats.requests += 1
            try:
                # The SDK's timeout bounds each read; this bounds the whole request, trickling servers included.
                async with asyncio.timeout(self.config.timeout_s):
                    raw = await client.chat.completions.with_raw_response.create(**request)
                    return raw.text
            except TimeoutError:
                raise Timeout(f"{self.name}: no reply within {self.config.timeout_s:g}s") from None
            except openai.APIError as exc:
                raise self._typed(exc) from exc
            finally:
                self._in_flight -= 1

    def _typed(self, exc: openai.APIError) -> ModelError:
        where = self.config.base_url or "the OpenAI API"
        if isinstance(exc, openai.APITimeoutError):
            return Timeout(f"{self.name}: no reply within {self.config.timeout_s:g}s")
        if isinstance(exc, openai.APIConnectionError):
            return ModelUnavailable(f"{self.name}: cannot reach {where}: {_root_cause(exc)}", retryable=True)
        if isinstance(exc, openai.APIStatusError):
            status, wait = exc.status_code, retry_after_seconds(exc.response.headers)
            text = f"{self.name}: HTTP {status} from {where}: {exc.message}"
            if status == 429:
                return RateLimited(text, status_code=status, retry_after_s=wait)
            if status >= 500 or status in _RETRYABLE_STATUS:
                return ModelUnavailable(text, status_code=status, retry_after_s=wait, retryable=True)
            if status in (401, 403, 404):
                return ModelUnavailable(text, status_code=status)
            return BadResponse(text, status_code=status)
        return BadResponse(f"{self.name}: {exc}")


def _root_cause(exc: BaseException) -> str:
    """What lies under the SDK's "Connection error.": the innermost exception it was raised from (refused, a name that
    does not resolve, a TLS failure), with the SDK's own words when nothing lies under them."""
    inner, seen = exc, {id(exc)}
    while (nxt := inner.__cause__ or inner.__context__) is not None and id(nxt) not in seen:
        seen.add(id(nxt))
        inner = nxt
    text = str(inner).strip() or type(inner).__name__
    if isinstance(inner, OSError) and inner.errno and os.strerror(inner.errno) not in text:
        text = f"{os.strerror(inner.errno)}: {text}"  # asyncio's "Connect call failed" does not say it was refused
    return f"{exc} ({text})" if inner is not exc and text != str(exc) else str(exc)

