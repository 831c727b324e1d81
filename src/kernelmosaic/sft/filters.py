"""Filters over verified episodes: minimum speedup, maximum length in tokens, near-duplicate trajectories."""

from __future__ import annotations

import re

from datasketch import MinHash, MinHashLSH
from pydantic import BaseModel, ConfigDict, Field

from kernelmosaic.sft.config import FilterConfig
from kernelmosaic.sft.metadata import EpisodeMeta

__all__ = ["FilterResult", "apply_filters", "shingles"]

_WORD = re.compile(r"\w+|[^\w\s]")
_NUM_PERM = 128


class FilterResult(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    kept: list[int] = Field(default_factory=list)
    """Indexes of the episodes kept, ascending."""
    dropped: dict[str, list[int]] = Field(default_factory=dict)
    """Reason (`min_speedup`, `max_tokens`, `near_duplicate`) -> episode ids dropped for it."""
    duplicate_of: dict[int, int] = Field(default_factory=dict)
    """Episode id dropped as a near-duplicate -> the episode id kept in its place."""


def shingles(text: str, n: int = 5) -> set[str]:
    """Word n-grams of `text` (punctuation as words), the unit of the near-duplicate comparison."""
    words = _WORD.findall(text)
    return {" ".join(words[i : i + n]) for i in range(max(1, len(words) - n + 1))} if words else set()


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


def apply_filters(metas: list[EpisodeMeta], assistant_texts: list[str], config: FilterConfig) -> FilterResult:
    """Which episodes pass; `assistant_texts[i]` is everything the model wrote in episode i (content and calls)."""
    result = FilterResult()
    candidates = []
    for i, meta in enumerate(metas):
        if config.min_speedup and meta.speedup_vs_eager < config.min_speedup:
            result.dropped.setdefault("min_speedup", []).append(meta.episode_id)
        elif config.max_tokens and meta.tokens > config.max_tokens:
            result.dropped.setdefault("max_tokens", []).append(meta.episode_id)
        else:
            candidates.append(i)
    if not config.drop_near_duplicates:
        result.kept = candidates
        return result
    # Faster solutions first, so the one kept of a near-duplicate group is the fastest; MinHash LSH proposes
    # pairs at a lower threshold than the exact Jaccard that decides, so its noise costs no recall.
    lsh = MinHashLSH(threshold=max(0.05, config.near_duplicate_threshold * 0.7), num_perm=_NUM_PERM)
    kept_shingles: dict[int, set[str]] = {}
    for i in sorted(candidates, key=lambda k: (-metas[k].speedup_vs_eager, metas[k].episode_id)):
        mine = shingles(assistant_texts[i])
        signature = MinHash(num_perm=_NUM_PERM)
        for s in mine:
            signature.update(s.encode())
        twin = next((int(k) for k in sorted(lsh.query(signature), key=int)
                     if _jaccard(mine, kept_shingles[int(k)]) >= config.near_duplicate_threshold), None)
        if twin is not None:
            result.dropped.setdefault("near_duplicate", []).append(metas[i].episode_id)
            result.duplicate_of[metas[i].episode_id] = metas[twin].episode_id
            continue
        kept_shingles[i] = mine
        lsh.insert(str(i), signature)
    result.kept = sorted(kept_shingles)
    return result
