"""Errors the store raises; each message names the database, the row and what to do."""

from __future__ import annotations

__all__ = ["StoreError", "NotFoundError", "EventConflictError"]


class StoreError(Exception):
    """The store cannot do what was asked: bad URL, newer schema, a contract broken by the caller."""


class NotFoundError(StoreError):
    """A run, episode or candidate id that the database does not hold."""


class EventConflictError(StoreError):
    """An event was appended at a seq that already holds a different event.

    Replaying the same event is harmless (idempotent); a different payload means two writers
    disagree about the trajectory, which must never be resolved silently.
    """
