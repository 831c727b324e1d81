"""`kernelmosaic curate select|duplicates`: diversity-aware selection with quotas, and duplicate clusters."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from pydantic import ValidationError
from rich.table import Table

from kernelmosaic.commands import Console, fail
from kernelmosaic.tasks.errors import TaskFormatError
from kernelmosaic.tasks.schema import Task

if TYPE_CHECKING:
    from kernelmosaic.curate.select import SelectConfig

__all__ = ["app", "load_select_config"]

app = typer.Typer(no_args_is_help=True)
console = Console()
err = Console(stderr=True)
_CACHE = Path.home() / ".cache" / "kernelmosaic" / "embeddings"




def _load(source: str) -> list[Task]:
    from kernelmosaic.tasks.sources import load_tasks

    try:
        tasks = load_tasks(source)
    except TaskFormatError as exc:
        raise fail(str(exc)) from None
    ids = [t.id for t in tasks]
    if len(set(ids)) != len(ids):
        twice = sorted({i for i in ids if ids.count(i) > 1})
        raise fail(f"{source}: task ids appear more than once: {', '.join(twice[:10])}")
    return tasks


def load_select_config(path: Path | None, sets: list[str], flags: dict) -> SelectConfig:
    """`[select]` of the config file (./kernelmosaic.toml when present), then `--set select.KEY=V`, then flags."""
    from kernelmosaic.config import ConfigError, build, read_config
    from kernelmosaic.curate.select import SelectConfig

    try:
        return build(SelectConfig, read_config(path, sets, reads=("select",)), "select", flags=flags)
    except ConfigError as exc:
        raise fail(str(exc)) from None


@app.command("select")
def select_command(
    tasks: str = typer.Option("builtin", "--tasks", help="Task source: builtin, a folder, a .parquet, kernelbench:PATH."),
    budget: int | None = typer.Option(None, "--budget", help="How many tasks to select (required here or in --config)."),
    out: Path = typer.Option(..., "--out", help="Output folder: tasks/, selection.json, coverage.{json,md,png}."),
    config: Path | None = typer.Option(None, "--config", help="TOML file whose [select] section is a SelectConfig "
                                       "(default ./kernelmosaic.toml when present)."),
    sets: list[str] = typer.Option([], "--set", help="Override one value, e.g. --set select.quotas.min_per_level=5."),
    method: str | None = typer.Option(None, help="facility (default) or kcenter."),
    dedup: str | None = typer.Option(None, help="Drop duplicates first: none, exact (default) or near."),
    max_category_share: float | None = typer.Option(None, help="Largest share of the budget for one category."),
    fmt: str = typer.Option("folder", "--format", help="Format of the selected tasks: folder, parquet, kernelbench."),
    cache: bool = typer.Option(True, help="Cache embeddings (keyed by model and text hash)."),
    cache_dir: Path = typer.Option(_CACHE, help="Where the embedding cache lives."),
) -> None:
    """Select a diverse subset of tasks under category, level and spec-form quotas; report coverage."""
    from kernelmosaic.curate.coverage import coverage_table
    from kernelmosaic.curate.embed import Embedder, EmbeddingError
    from kernelmosaic.curate.pipeline import select_tasks, write_selection

    cfg = load_select_config(config, sets, {"budget": budget, "method": method, "dedup": dedup,
                                            "quotas": {"max_category_share": max_category_share},
                                            "features": {"cache_dir": str(cache_dir) if cache else None}})
    pool = _load(tasks)
    if not pool:
        raise fail(f"{tasks}: holds no tasks")
    with console.phases("loading the embedding model", "curate select") as phase:
        try:
            embedder = Embedder()
        except EmbeddingError as exc:
            raise fail(str(exc)) from None
        outcome = select_tasks(pool, cfg, embedder, progress=phase)
        phase("writing the selection and the coverage report")
        written = write_selection(outcome, cfg, out, tasks, fmt)
    for table in coverage_table(outcome.coverage):
        console.print(table)
    sel = outcome.selection
    console.print(f"selected {len(sel.ids)} of {len(pool)} tasks ({len(sel.dropped_duplicates)} duplicates dropped "
                  f"first); mean similarity to the nearest selected task {sel.objective:.3f}", highlight=False)
    for shortfall in sel.shortfalls:
        console.print(f"[yellow]quota not met:[/yellow] {shortfall}", highlight=False)
    console.print(f"wrote {written['tasks']}, {written['coverage_md']} and {written['plot']}", highlight=False)


@app.command("duplicates")
def duplicates_command(
    tasks: str = typer.Argument("builtin", help="Task source."),
    threshold: float = typer.Option(0.8, help="Shingle Jaccard at or above which tasks are near-duplicates."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Report exact (normalized-AST) and near (MinHash) duplicate clusters; exit 1 when there are any."""
    from kernelmosaic.curate.duplicates import DuplicateConfig, find_duplicates

    try:
        report = find_duplicates(_load(tasks), DuplicateConfig(threshold=threshold))
    except (ValueError, ValidationError) as exc:
        raise fail(str(exc)) from None
    if as_json:
        typer.echo(report.model_dump_json(indent=1))
    else:
        table = Table(title=f"{len(report.exact)} exact and {len(report.near)} near-duplicate clusters "
                            f"among {report.tasks} tasks")
        for col in ("kind", "keep", "duplicates", "lowest Jaccard"):
            table.add_column(col, overflow="fold")
        for c in report.exact + report.near:
            table.add_row(c.kind, c.keep, ", ".join(t for t in c.task_ids if t != c.keep), f"{c.min_similarity:.2f}")
        console.print(table)
    if report.exact or report.near:
        raise typer.Exit(1)
