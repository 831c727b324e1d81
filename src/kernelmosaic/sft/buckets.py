"""Buckets (category, spec source, failure type, performance gain, difficulty), sampling to target ratios, and the
table of counts per bucket at each stage of the export."""

from __future__ import annotations

import random
from collections import Counter

from pydantic import BaseModel, ConfigDict, Field

from kernelmosaic.sft.config import DIMENSIONS, BalanceConfig, Dimension
from kernelmosaic.sft.metadata import EpisodeMeta

__all__ = ["bucket_of", "sample_to_ratios", "CountsTable"]


def _gain(speedup: float, edges: list[float]) -> str:
    if speedup <= 0:
        return "untimed"
    if speedup < edges[0]:
        return f"<{edges[0]:g}x"
    for low, high in zip(edges, edges[1:], strict=False):
        if speedup < high:
            return f"{low:g}-{high:g}x"
    return f">={edges[-1]:g}x"


def bucket_of(meta: EpisodeMeta, dimension: Dimension, gain_edges: list[float]) -> str:
    """The bucket of one episode along one dimension."""
    if dimension == "category":
        return meta.category
    if dimension == "spec_source":
        return meta.spec_source
    if dimension == "failure_type":
        return meta.first_failure or "none"
    if dimension == "gain":
        return _gain(meta.speedup_vs_eager, gain_edges) if gain_edges else "all"
    if dimension == "difficulty":
        return f"L{meta.level}"
    raise ValueError(f"unknown bucket dimension {dimension!r} (known: {', '.join(DIMENSIONS)})")


def sample_to_ratios(metas: list[EpisodeMeta], config: BalanceConfig) -> list[int]:
    """Indexes (ascending) of the episodes kept so that bucket shares along `config.by` meet `config.ratios`.

    The total is the largest the scarcest bucket allows (capped by `max_rows`); within a bucket the episodes kept
    are a seeded random sample. Without `by`, every index is kept.
    """
    if config.by is None:
        return list(range(len(metas)))
    members: dict[str, list[int]] = {}
    for i, meta in enumerate(metas):
        members.setdefault(bucket_of(meta, config.by, config.gain_edges), []).append(i)
    total_share = sum(config.ratios.values())
    shares = {b: r / total_share for b, r in config.ratios.items() if r > 0}
    room = min(len(members.get(b, [])) / s for b, s in shares.items())
    if config.max_rows:
        room = min(room, config.max_rows)
    rng = random.Random(config.seed)
    kept: list[int] = []
    for bucket, share in sorted(shares.items()):
        pool = members.get(bucket, [])
        kept += rng.sample(pool, min(len(pool), int(room * share + 1e-9)))
    return sorted(kept)


class CountsTable(BaseModel):
    """Episodes per bucket along every dimension, at each stage of the export (saved as counts.json / counts.md)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    stages: list[str] = Field(default_factory=list)
    """Stage names in order, e.g. `verified`, `filtered`, `decontaminated`, `sampled`."""
    totals: dict[str, int] = Field(default_factory=dict)
    """Stage -> episodes."""
    counts: dict[str, dict[str, dict[str, int]]] = Field(default_factory=dict)
    """Dimension -> bucket -> stage -> episodes."""

    def add_stage(self, stage: str, metas: list[EpisodeMeta], gain_edges: list[float]) -> None:
        self.stages.append(stage)
        self.totals[stage] = len(metas)
        for dimension in DIMENSIONS:
            counted = Counter(bucket_of(m, dimension, gain_edges) for m in metas)
            table = self.counts.setdefault(dimension, {})
            for bucket in set(table) | set(counted):
                table.setdefault(bucket, {})[stage] = counted.get(bucket, 0)

    def rows(self) -> list[list[str]]:
        """[dimension, bucket, count per stage...] for every bucket, dimension by dimension."""
        out = []
        for dimension in DIMENSIONS:
            for bucket, by_stage in sorted(self.counts.get(dimension, {}).items()):
                out.append([dimension, bucket] + [str(by_stage.get(s, 0)) for s in self.stages])
        out.append(["total", ""] + [str(self.totals[s]) for s in self.stages])
        return out

    def markdown(self) -> str:
        head = ["dimension", "bucket", *self.stages]
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(row) + " |" for row in self.rows()]
        return "\n".join(lines) + "\n"
