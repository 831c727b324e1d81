"""Coverage of a selection against its pool: counts per bucket and nearest-neighbour distances, before and
after, with a seeded random subset of the same size as the yardstick; as a table (rich, Markdown) and a plot.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field
from rich.table import Table

from kernelmosaic.curate.select import buckets
from kernelmosaic.tasks.schema import Task

__all__ = ["DistanceStats", "BucketRow", "CoverageReport", "coverage_report", "coverage_table", "coverage_markdown",
           "plot_coverage"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class DistanceStats(_Model):
    mean: float
    median: float
    p90: float
    max: float

    @classmethod
    def of(cls, values: np.ndarray) -> DistanceStats:
        if values.size == 0:
            return cls(mean=0.0, median=0.0, p90=0.0, max=0.0)
        return cls(mean=round(float(values.mean()), 4), median=round(float(np.median(values)), 4),
                   p90=round(float(np.quantile(values, 0.9)), 4), max=round(float(values.max()), 4))


class BucketRow(_Model):
    bucket: str
    pool: int
    selected: int


class CoverageReport(_Model):
    pool: int
    selected: int
    buckets: list[BucketRow]
    nn_pool: DistanceStats
    """Each pool task's distance (1 - similarity) to its nearest other pool task: redundancy before."""
    nn_selected: DistanceStats
    """The same within the selection: higher means the selection repeats itself less."""
    cover_selected: DistanceStats
    """Each pool task's distance to its nearest selected task: how well the selection stands for the pool."""
    cover_random: DistanceStats
    """The same for a random subset of the same size (seed 0), for comparison."""
    nn_pool_values: list[float] = Field(default_factory=list, exclude=True)
    nn_selected_values: list[float] = Field(default_factory=list, exclude=True)
    cover_selected_values: list[float] = Field(default_factory=list, exclude=True)
    cover_random_values: list[float] = Field(default_factory=list, exclude=True)


def _nn(sim: np.ndarray) -> np.ndarray:
    if len(sim) < 2:
        return np.zeros(0)
    masked = sim.copy()
    np.fill_diagonal(masked, -np.inf)
    return 1.0 - masked.max(axis=1)


def coverage_report(pool: list[Task], sim: np.ndarray, selected_ids: list[str]) -> CoverageReport:
    """`sim` is the pool's similarity matrix (rows in `pool` order)."""
    index = {t.id: i for i, t in enumerate(pool)}
    chosen = np.array([index[i] for i in selected_ids], dtype=int)
    rng = np.random.default_rng(0)
    random = np.sort(rng.choice(len(pool), size=len(chosen), replace=False)) if len(chosen) else chosen
    before = Counter(b for t in pool for b in buckets(t))
    after = Counter(b for i in chosen for b in buckets(pool[i]))
    rows = [BucketRow(bucket=b, pool=before[b], selected=after[b]) for b in sorted(before)]
    nn_pool, nn_sel = _nn(sim), _nn(sim[np.ix_(chosen, chosen)])
    cover = 1.0 - sim[:, chosen].max(axis=1) if len(chosen) else np.ones(len(pool))
    cover_rnd = 1.0 - sim[:, random].max(axis=1) if len(chosen) else np.ones(len(pool))
    return CoverageReport(
        pool=len(pool), selected=len(chosen), buckets=rows,
        nn_pool=DistanceStats.of(nn_pool), nn_selected=DistanceStats.of(nn_sel),
        cover_selected=DistanceStats.of(cover), cover_random=DistanceStats.of(cover_rnd),
        nn_pool_values=nn_pool.tolist(), nn_selected_values=nn_sel.tolist(),
        cover_selected_values=cover.tolist(), cover_random_values=cover_rnd.tolist(),
    )


def _distance_rows(report: CoverageReport) -> list[tuple[str, DistanceStats]]:
    return [("nearest other task, pool (before)", report.nn_pool),
            ("nearest other task, selection (after)", report.nn_selected),
            ("pool task to nearest selected", report.cover_selected),
            ("pool task to nearest of random subset", report.cover_random)]


def coverage_table(report: CoverageReport) -> list[Table]:
    counts = Table(title=f"coverage: {report.selected} selected of {report.pool}")
    for col in ("bucket", "pool", "pool %", "selected", "selected %"):
        counts.add_column(col, justify="left" if col == "bucket" else "right")
    for row in report.buckets:
        counts.add_row(row.bucket, str(row.pool), f"{row.pool / max(report.pool, 1):.0%}", str(row.selected),
                       f"{row.selected / max(report.selected, 1):.0%}")
    dist = Table(title="nearest-neighbour distances (1 - similarity)")
    for col in ("measure", "mean", "median", "p90", "max"):
        dist.add_column(col, justify="left" if col == "measure" else "right")
    for name, s in _distance_rows(report):
        dist.add_row(name, f"{s.mean:.3f}", f"{s.median:.3f}", f"{s.p90:.3f}", f"{s.max:.3f}")
    return [counts, dist]


def coverage_markdown(report: CoverageReport) -> str:
    lines = [f"# Coverage: {report.selected} selected of {report.pool}", "",
             "| bucket | pool | pool % | selected | selected % |", "|---|---:|---:|---:|---:|"]
    for r in report.buckets:
        lines.append(f"| {r.bucket} | {r.pool} | {r.pool / max(report.pool, 1):.0%} | {r.selected} | "
                     f"{r.selected / max(report.selected, 1):.0%} |")
    lines += ["", "| distance (1 - similarity) | mean | median | p90 | max |", "|---|---:|---:|---:|---:|"]
    for name, s in _distance_rows(report):
        lines.append(f"| {name} | {s.mean:.3f} | {s.median:.3f} | {s.p90:.3f} | {s.max:.3f} |")
    return "\n".join(lines) + "\n"


def plot_coverage(report: CoverageReport, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(18, 6.5))
    rows = report.buckets
    y = np.arange(len(rows))
    axes[0].barh(y - 0.2, [r.pool / max(report.pool, 1) for r in rows], 0.4, label=f"pool ({report.pool})")
    axes[0].barh(y + 0.2, [r.selected / max(report.selected, 1) for r in rows], 0.4,
                 label=f"selected ({report.selected})")
    axes[0].set_yticks(y, [r.bucket for r in rows], fontsize=7)
    axes[0].invert_yaxis()
    axes[0].set_xlabel("share of the set")
    axes[0].set_title("buckets before and after")
    axes[0].legend()
    bins = np.linspace(0, 1, 26)
    axes[1].hist(report.nn_pool_values, bins=bins, alpha=0.6, density=True, label="pool (before)")
    axes[1].hist(report.nn_selected_values, bins=bins, alpha=0.6, density=True, label="selection (after)")
    axes[1].set_xlabel("distance to nearest other task in the set")
    axes[1].set_title("redundancy")
    axes[1].legend()
    for values, label in ((report.cover_selected_values, "selection"), (report.cover_random_values, "random subset")):
        xs = np.sort(values)
        axes[2].plot(xs, np.arange(1, len(xs) + 1) / max(len(xs), 1), label=label)
    axes[2].set_xlabel("pool task's distance to nearest chosen task")
    axes[2].set_ylabel("fraction of pool")
    axes[2].set_title("coverage of the pool")
    axes[2].legend()
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
