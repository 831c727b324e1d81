"""Selection end to end: duplicates, features, greedy selection with quotas, coverage; and its output folder."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kernelmosaic.curate.coverage import CoverageReport, coverage_markdown, coverage_report, plot_coverage
from kernelmosaic.curate.duplicates import DuplicateReport, find_duplicates
from kernelmosaic.curate.embed import Embedder
from kernelmosaic.curate.features import TaskFeatures, build_features
from kernelmosaic.curate.select import SelectConfig, Selection, select_greedy
from kernelmosaic.tasks.schema import Task
from kernelmosaic.tasks.sources import export_tasks

__all__ = ["SelectOutcome", "select_tasks", "write_selection"]


@dataclass(frozen=True)
class SelectOutcome:
    tasks: list[Task]
    """The whole input, in input order."""
    duplicates: DuplicateReport
    features: TaskFeatures
    selection: Selection
    coverage: CoverageReport


def _dropped(report: DuplicateReport, dedup: str) -> set[str]:
    if dedup == "none":
        return set()
    clusters = report.exact if dedup == "exact" else report.exact + report.near
    return {t for c in clusters for t in c.task_ids if t != c.keep}


def select_tasks(tasks: list[Task], config: SelectConfig, embedder: Embedder,
                 progress: Callable[[str], None] | None = None) -> SelectOutcome:
    """Select `config.budget` tasks; raises ValueError on duplicate task ids."""
    if progress:
        progress("looking for duplicates")
    duplicates = find_duplicates(tasks, config.duplicates)
    features = build_features(tasks, embedder, config.features, progress)
    sim = features.similarity()
    dropped = _dropped(duplicates, config.dedup)
    keep = [i for i, t in enumerate(tasks) if t.id not in dropped]
    if progress:
        progress(f"selecting {config.budget} of {len(keep)} ({config.method})")
    selection = select_greedy([tasks[i] for i in keep], sim[np.ix_(keep, keep)], config)
    selection = selection.model_copy(update={"dropped_duplicates": sorted(dropped)})
    return SelectOutcome(tasks=tasks, duplicates=duplicates, features=features, selection=selection,
                         coverage=coverage_report(tasks, sim, selection.ids))


def write_selection(outcome: SelectOutcome, config: SelectConfig, out: Path, source: str,
                    fmt: str = "folder") -> dict[str, Path]:
    """Write the selected tasks (in `fmt`) and the reports into `out`; returns what was written, by name."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    by_id = {t.id: t for t in outcome.tasks}
    chosen = [by_id[i] for i in outcome.selection.ids]
    written = {"tasks": export_tasks(chosen, fmt, out / "tasks", f"KernelMosaic selection from {source}")}
    record = {"schema": "kernelmosaic.selection/1", "source": source, "config": config.model_dump(mode="json"),
              **outcome.selection.model_dump(mode="json"),
              "signatures": dict(zip(outcome.features.ids, outcome.features.signatures, strict=True))}
    written["selection"] = out / "selection.json"
    written["selection"].write_text(json.dumps(record, indent=1), encoding="utf-8")
    written["duplicates"] = out / "duplicates.json"
    written["duplicates"].write_text(outcome.duplicates.model_dump_json(indent=1), encoding="utf-8")
    written["coverage"] = out / "coverage.json"
    written["coverage"].write_text(outcome.coverage.model_dump_json(indent=1), encoding="utf-8")
    written["coverage_md"] = out / "coverage.md"
    written["coverage_md"].write_text(coverage_markdown(outcome.coverage), encoding="utf-8")
    written["plot"] = plot_coverage(outcome.coverage, out / "coverage.png")
    return written
