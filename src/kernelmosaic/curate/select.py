"""Diversity-aware selection: greedy facility location (or k-center) over task similarities, with quotas.

Quotas come first: while some bucket (category, level, spec form) is below its minimum, only tasks that
fill such a bucket are eligible; after that every task is, except those whose category is at its cap.
Ties go to the smaller task id, so the same input and config always give the same selection.
"""

from __future__ import annotations

from collections import Counter
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from kernelmosaic.curate.duplicates import DuplicateConfig
from kernelmosaic.curate.features import FeatureConfig
from kernelmosaic.tasks.schema import Task

__all__ = ["Quotas", "SelectConfig", "Selection", "buckets", "select_greedy"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class Quotas(_Model):
    min_per_category: int = Field(1, ge=0)
    """Every category present in the pool gets at least this many tasks (or all it has)."""
    min_per_level: int = Field(1, ge=0)
    """Every level present in the pool gets at least this many tasks (or all it has)."""
    min_per_form: int = Field(1, ge=0)
    """Tasks with a math spec and tasks without one each get at least this many (or all there are)."""
    max_category_share: float = Field(0.3, gt=0, le=1)
    """No category takes more than this share of the budget (raised to its minimum when that is larger)."""
    minimums: dict[str, int] = Field(default_factory=dict)
    """Explicit minimums by bucket name, e.g. `{"category:gemm": 5, "level:3": 4, "form:spec": 30}`."""


class SelectConfig(_Model):
    budget: int = Field(ge=1)
    """How many tasks to select."""
    method: Literal["facility", "kcenter"] = "facility"
    """`facility`: maximize the summed similarity of every pool task to its nearest selected one;
    `kcenter`: repeatedly take the task farthest from everything selected so far."""
    dedup: Literal["none", "exact", "near"] = "exact"
    """Drop duplicates before selecting: exact copies only, near-duplicate clusters too, or nothing."""
    quotas: Quotas = Field(default_factory=Quotas)
    features: FeatureConfig = Field(default_factory=FeatureConfig)
    duplicates: DuplicateConfig = Field(default_factory=DuplicateConfig)


class Selection(_Model):
    ids: list[str]
    """Selected task ids in the order they were picked."""
    dropped_duplicates: list[str] = Field(default_factory=list)
    """Tasks removed before selecting because a representative of their cluster stays."""
    shortfalls: list[str] = Field(default_factory=list)
    """Quotas the budget could not satisfy, as sentences."""
    objective: float = 0.0
    """Mean similarity of every candidate task to its nearest selected task (facility-location value / n)."""


def buckets(task: Task) -> list[str]:
    """The quota buckets a task belongs to."""
    return [f"category:{task.category}", f"level:{task.level}", f"form:{'spec' if task.has_spec else 'no-spec'}"]


def _needs(tasks: list[Task], quotas: Quotas) -> dict[str, int]:
    counts = Counter(b for t in tasks for b in buckets(t))
    default = {"category": quotas.min_per_category, "level": quotas.min_per_level, "form": quotas.min_per_form}
    needs = {b: min(default[b.split(":")[0]], n) for b, n in counts.items()}
    for bucket, n in quotas.minimums.items():
        needs[bucket] = min(n, counts.get(bucket, 0))
    return {b: n for b, n in needs.items() if n > 0}


def _gains(method: str, sim: np.ndarray, best: np.ndarray, chosen: list[int]) -> np.ndarray:
    if method == "facility":
        return np.maximum(sim - best[:, None], 0.0).sum(axis=0)
    if not chosen:
        return sim.sum(axis=0)  # k-center starts from the most central task
    return 1.0 - best  # distance to the nearest selected task


def select_greedy(tasks: list[Task], sim: np.ndarray, config: SelectConfig) -> Selection:
    """Pick `config.budget` of `tasks` (already deduplicated) given their pairwise similarity `sim`."""
    order = sorted(range(len(tasks)), key=lambda i: tasks[i].id)
    tasks = [tasks[i] for i in order]
    sim = sim[np.ix_(order, order)]
    n, budget = len(tasks), min(config.budget, len(tasks))
    needs = _needs(tasks, config.quotas)
    cap_share = int(config.quotas.max_category_share * config.budget)
    caps = {b: max(cap_share, needs.get(b, 0), 1) for t in tasks for b in buckets(t)[:1]}
    member = [set(buckets(t)) for t in tasks]
    have: Counter[str] = Counter()
    best = np.zeros(n)
    chosen: list[int] = []
    free = np.ones(n, dtype=bool)
    while len(chosen) < budget:
        unmet = {b for b, k in needs.items() if have[b] < k}
        eligible = free & np.array([have[buckets(t)[0]] < caps[buckets(t)[0]] for t in tasks])
        if unmet:
            eligible &= np.array([bool(m & unmet) for m in member])
        if not eligible.any():
            eligible = free.copy()  # caps and quotas cannot both hold: fill the budget regardless
        gains = np.where(eligible, _gains(config.method, sim, best, chosen), -np.inf)
        pick = int(np.argmax(gains))  # argmax takes the first maximum: the smallest id wins ties
        chosen.append(pick)
        free[pick] = False
        best = np.maximum(best, sim[:, pick])
        have.update(member[pick])
    shortfalls = [f"{b}: {have[b]} selected, quota {k}" for b, k in sorted(needs.items()) if have[b] < k]
    return Selection(ids=[tasks[i].id for i in chosen], shortfalls=shortfalls,
                     objective=round(float(best.mean()) if n else 0.0, 6))
