"""Content hashes of problems and candidates (the problem hash ignores whitespace, as edits of layout are no change)."""

from __future__ import annotations

import hashlib

__all__ = ["problem_hash", "candidate_hash"]


def problem_hash(source: str) -> str:
    return hashlib.sha256("".join(source.split()).encode()).hexdigest()


def candidate_hash(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()
