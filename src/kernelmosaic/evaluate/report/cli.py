"""`kernelmosaic report RUN [--compare RUN2 ...] --out DIR`."""

from __future__ import annotations

from pathlib import Path

import typer

from kernelmosaic.commands import Console

__all__ = ["report_command"]


def report_command(
    run: int = typer.Argument(..., help="The run to report (any run: evaluate, generate)."),
    compare: list[int] = typer.Option([], "--compare", help="Another run to show beside it (repeatable)."),
    out: Path = typer.Option(..., "--out", help="Folder for report.html, summary.json, summary.md and artifacts."),
    db: str | None = typer.Option(None, "--db", envvar="KERNELMOSAIC_DB", help="Store URL (default ./kernelmosaic.db)."),
) -> None:
    """Write an HTML report (plots embedded), summary.json and summary.md for a run and its comparisons."""
    from kernelmosaic.commands import fail
    from kernelmosaic.evaluate.baselines import BaselineCache
    from kernelmosaic.evaluate.report.writer import write_report
    from kernelmosaic.evaluate.summary import summarize_run
    from kernelmosaic.store import NotFoundError, StoreError, open_store

    try:
        store = open_store(db)
        cache = BaselineCache()
        summaries = [summarize_run(store, rid, cache) for rid in [run, *compare]]
    except NotFoundError as exc:
        raise fail(f"{exc} in {db or 'the default store'} (RUN / --compare)") from exc
    except StoreError as exc:
        raise fail(str(exc)) from exc
    page = write_report(store, summaries, out)
    Console().print(f"report of run(s) {', '.join(str(s.run.id) for s in summaries)}: {page}", highlight=False)
