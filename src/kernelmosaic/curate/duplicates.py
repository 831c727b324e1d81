"""Near-duplicate detection within one task set: exact copies by normalized-AST hash, near copies by MinHash
LSH over token shingles of the normalized reference, or of the spec's canonical form (two tasks whose
specs say the same are copies however their references are written), reported as clusters.

Only tasks of one dtype are compared: a bf16 variant of an fp32 task is another kernel to write.
LSH proposes candidate pairs at a lower threshold than the report's; the exact Jaccard of the shingle sets
decides, so MinHash noise costs neither precision nor (much) recall.
"""

from __future__ import annotations

from collections import defaultdict

from datasketch import MinHash, MinHashLSH
from pydantic import BaseModel, ConfigDict, Field

from kernelmosaic.curate.normalize import ast_hash, problem_tokens, shingles, spec_tokens
from kernelmosaic.tasks.schema import Task

__all__ = ["DuplicateConfig", "Cluster", "DuplicateReport", "task_shingles", "find_duplicates"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class DuplicateConfig(_Model):
    threshold: float = Field(0.8, gt=0, le=1)
    """Shingle-set Jaccard at or above which two tasks are near-duplicates."""
    shingle: int = Field(5, ge=1)
    """Tokens per shingle."""
    num_perm: int = Field(128, ge=16)
    """MinHash permutations."""
    candidate_ratio: float = Field(0.6, gt=0, le=1)
    """LSH retrieves pairs at `threshold * candidate_ratio`; exact Jaccard then decides."""


class Cluster(_Model):
    kind: str
    """`exact` (same normalized AST) or `near` (Jaccard at or above the threshold, exact copies merged in)."""
    task_ids: list[str]
    """Members, sorted; the first that `keep` does not name is a duplicate of it."""
    keep: str
    """The representative a selection keeps: spec first, then a passed audit, then the smallest id."""
    min_similarity: float
    """Lowest Jaccard among the pairs that joined the cluster (1.0 for exact clusters)."""


class DuplicateReport(_Model):
    tasks: int
    exact: list[Cluster] = Field(default_factory=list)
    near: list[Cluster] = Field(default_factory=list)
    """Clusters that are not already wholly exact copies of each other."""

    def cluster_of(self, task_id: str) -> list[Cluster]:
        return [c for c in self.exact + self.near if task_id in c.task_ids]

    def dropped(self) -> set[str]:
        """Every task that is a duplicate of its cluster's representative."""
        return {t for c in self.exact + self.near for t in c.task_ids if t != c.keep}


def task_shingles(task: Task, k: int, view: str = "reference") -> set[str]:
    """Shingles of the normalized reference (`reference`) or of the spec's canonical form (`spec`)."""
    if view == "reference":
        return shingles(problem_tokens(task.forms.reference), k)
    return shingles(spec_tokens(task.forms.spec), k)


def _similar_pairs(sets: dict[str, set[str]], config: DuplicateConfig) -> list[tuple[str, str, float]]:
    """(a, b, Jaccard) with a < b for every pair at or above the threshold."""
    lsh = MinHashLSH(threshold=config.threshold * config.candidate_ratio, num_perm=config.num_perm)
    hashes = {}
    for key in sorted(sets):
        mh = MinHash(num_perm=config.num_perm, seed=1)
        mh.update_batch([s.encode("utf-8") for s in sorted(sets[key])])
        hashes[key] = mh
        lsh.insert(key, mh)
    pairs = []
    for key in sorted(sets):
        for other in sorted(lsh.query(hashes[key])):
            if other > key:
                sim = _jaccard(sets[key], sets[other])
                if sim >= config.threshold:
                    pairs.append((key, other, sim))
    return pairs


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


def _representative(tasks: list[Task]) -> str:
    def rank(t: Task) -> tuple:
        return (not t.has_spec, not (t.audit is not None and t.audit.passed), t.id)

    return min(tasks, key=rank).id


class _UnionFind:
    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, x: str) -> str:
        self.parent.setdefault(x, x)
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def find_duplicates(tasks: list[Task], config: DuplicateConfig | None = None) -> DuplicateReport:
    """Exact and near-duplicate clusters among `tasks` (ids must be unique)."""
    config = config or DuplicateConfig()
    by_id = {t.id: t for t in tasks}
    if len(by_id) != len(tasks):
        raise ValueError("task ids must be unique to look for duplicates")
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    for task in tasks:
        groups[(task.dtype, ast_hash(task.forms.reference))].append(task.id)
    exact = [sorted(ids) for ids in groups.values() if len(ids) > 1]

    uf, lowest = _UnionFind(), {}
    for ids in exact:
        for other in ids[1:]:
            uf.union(ids[0], other)
    for view in ("reference", "spec"):
        sets = {t.id: task_shingles(t, config.shingle, view) for t in tasks}
        for a, b, sim in _similar_pairs({k: v for k, v in sets.items() if v}, config):
            if by_id[a].dtype == by_id[b].dtype:  # another precision is another kernel to write, not a copy
                uf.union(a, b)
                lowest[(a, b)] = max(sim, lowest.get((a, b), 0.0))
    members: dict[str, list[str]] = defaultdict(list)
    for task_id in sorted(by_id):
        members[uf.find(task_id)].append(task_id)
    exact_sets = [set(ids) for ids in exact]
    near = []
    for ids in members.values():
        if len(ids) < 2 or set(ids) in exact_sets:
            continue
        sims = [s for (a, b), s in lowest.items() if a in ids and b in ids]
        near.append(Cluster(kind="near", task_ids=ids, keep=_representative([by_id[i] for i in ids]),
                            min_similarity=round(min(sims, default=1.0), 4)))
    return DuplicateReport(
        tasks=len(tasks),
        exact=[Cluster(kind="exact", task_ids=ids, keep=_representative([by_id[i] for i in ids]), min_similarity=1.0)
               for ids in sorted(exact)],
        near=sorted(near, key=lambda c: c.task_ids),
    )
