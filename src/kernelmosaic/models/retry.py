"""Retry timing for remote backends: exponential backoff with jitter, and the server's Retry-After."""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Mapping

__all__ = ["backoff_delay", "retry_after_seconds"]


def backoff_delay(retry: int, initial_s: float, max_s: float, retry_after_s: float = 0.0) -> float:
    """Seconds to wait before retry number `retry` (0-based).

    A server's Retry-After wins when given (capped at `max_s`). Otherwise the delay doubles per
    retry and is drawn from its upper half, so many episodes that failed together do not all
    come back at the same instant.
    """
    if retry_after_s > 0:
        return min(retry_after_s, max_s)
    ceiling = min(max_s, initial_s * (2**retry))
    return random.uniform(ceiling / 2, ceiling)


def retry_after_seconds(headers: Mapping[str, str] | None) -> float:
    """The delay a response asks for: `retry-after-ms`, or `Retry-After` in seconds or as an HTTP date; 0 if none."""
    if not headers:
        return 0.0
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return 0.0
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return 0.0
    return max(0.0, when.timestamp() - time.time())
