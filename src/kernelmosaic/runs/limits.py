"""Model calls per endpoint, limited across the cluster: one small named actor per endpoint holds a semaphore,
and the episode actors' backends take a permit around each `complete`."""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any

from kernelmosaic.contracts.messages import Message, ModelReply, ToolSpec
from kernelmosaic.models.base import ModelBackend

__all__ = ["ModelLimiter", "LimitedBackend", "endpoint_key", "limiter_for", "LIMITED_SCHEMES"]

LIMITED_SCHEMES = ("openai", "hf")
"""Backends that call a model; replay and scripted ones only read recordings."""


def endpoint_key(model: str, options: dict[str, Any]) -> str:
    """One model endpoint: the spec and, for servers, the base URL it is reached at."""
    return f"{model}|{options.get('base_url', '')}"


class ModelLimiter:
    """At most `limit` permits out at once; counts what it let through (async actor)."""

    def __init__(self, limit: int) -> None:
        self._gate = asyncio.Semaphore(limit)
        self.in_flight = self.peak = self.calls = 0

    async def acquire(self) -> None:
        await self._gate.acquire()
        self.in_flight += 1
        self.calls += 1
        self.peak = max(self.peak, self.in_flight)

    async def release(self) -> None:
        self.in_flight -= 1
        self._gate.release()

    async def stats(self) -> dict[str, int]:
        return {"calls": self.calls, "peak": self.peak, "in_flight": self.in_flight}


def limiter_for(key: str, limit: int) -> Any:
    """The cluster's limiter of endpoint `key` (started on first use, owned by the caller: the driver)."""
    import ray

    name = "km-model-limit-" + hashlib.sha256(key.encode()).hexdigest()[:16]
    return ray.remote(ModelLimiter).options(name=name, get_if_exists=True, num_cpus=0,
                                            max_concurrency=1000).remote(limit)


class LimitedBackend:
    """`inner`, with each `complete` holding a permit of the endpoint's limiter."""

    def __init__(self, inner: ModelBackend, limiter: Any) -> None:
        self.inner, self.limiter, self.name = inner, limiter, inner.name

    def for_task(self, task_id: str) -> LimitedBackend:
        return LimitedBackend(self.inner.for_task(task_id), self.limiter)

    async def complete(self, messages: list[Message], tools: list[ToolSpec]) -> ModelReply:
        await self.limiter.acquire.remote()
        try:
            return await self.inner.complete(messages, tools)
        finally:
            await self.limiter.release.remote()

    def __getattr__(self, name: str) -> Any:  # origin_model and other backend attributes
        return getattr(self.inner, name)
