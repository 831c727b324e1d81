"""`kernelmosaic runs list | show RUN_ID | export RUN_ID --out FILE.jsonl`: look into the store."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import typer
from rich import box
from rich.table import Table

from kernelmosaic.commands import Console, fail
from kernelmosaic.store.backends import ENV_VAR
from kernelmosaic.store.errors import NotFoundError, StoreError
from kernelmosaic.store.export import export_run
from kernelmosaic.store.records import RunSummary, speedup_summary
from kernelmosaic.store.store import Store, open_store

__all__ = ["app"]

app = typer.Typer(no_args_is_help=True)

_DB_HELP = (f"Store: a SQLite file path, sqlite:///FILE or postgresql+psycopg://...; default ${ENV_VAR} or "
            "./kernelmosaic.db.")
DbOption = typer.Option(None, "--db", envvar=ENV_VAR, help=_DB_HELP, show_envvar=False)
JsonOption = typer.Option(False, "--json", help="Print JSON instead of a table.")




def _open(db: str | None) -> Store:
    try:
        return open_store(db, create=False)
    except StoreError as exc:
        raise fail(str(exc), 2) from exc


@app.command("list")
def list_command(db: str | None = DbOption, as_json: bool = JsonOption) -> None:
    """List runs, newest first, with episode counts and pass rates."""
    with _open(db) as store:
        summaries = [store.run_summary(run.id) for run in store.list_runs()]
    if as_json:
        typer.echo(json.dumps([s.model_dump(mode="json") for s in summaries], indent=1))
        return
    console = Console()
    wide = console.width >= 110  # narrower: the model and task source are left to `runs show` (a path folded into
    # a column of a few letters reads as nothing), and nothing else is split inside a word
    table = Table(title=f"runs in {store.url}", box=box.SIMPLE_HEAD, collapse_padding=True)
    columns = ("id", "name", "created", "model", "tasks", "status", "epi-\nsodes", "done", "solved", "pass\nrate")
    shown = [c for c in columns if wide or c not in ("model", "tasks", "done")]
    for column in shown:
        numeric = column in ("id", "epi-\nsodes", "done", "solved", "pass\nrate")
        table.add_column(column, justify="right" if numeric else "left", no_wrap=column not in ("name", "model", "tasks"),
                         overflow="fold")
    for s in summaries:
        run = s.run
        cells = dict(zip(columns, (
            str(run.id), run.name, run.created.strftime("%Y-%m-%d %H:%M" if wide else "%m-%d %H:%M"), run.model,
            run.task_source, run.status, str(s.episodes), str(s.done), str(s.solved), f"{s.pass_rate:.0%}"), strict=True))
        table.add_row(*(cells[c] for c in shown))
    console.print(table)


def _elapsed(s: RunSummary) -> float:
    """Wall time of the run itself (start to finish, or to now), not the sum of its concurrent episodes."""
    end = s.run.finished or datetime.now(UTC)
    return max(0.0, (end - s.run.created).total_seconds())


def _print_summary(console: Console, s: RunSummary) -> None:
    run, t = s.run, s.totals
    console.print(f"[bold]run {run.id}[/bold] {run.name}  model={run.model}  tasks={run.task_source}  status={run.status}")
    console.print(
        f"episodes {s.episodes}: done {s.done}, {'interrupted' if run.status == 'interrupted' else 'running'} "
        f"{s.running}, failed {s.failed}; "
        f"solved {s.solved} (verified), pass rate {f'{s.pass_rate:.1%}' if s.done + s.failed else '-'}, "
        + speedup_summary(s)
    )
    tokens = (f"tokens {t.prompt_tokens} prompt + {t.completion_tokens} completion"
              if t.prompt_tokens + t.completion_tokens else "tokens not measured")
    console.print(
        f"{tokens}, cost {f'${t.cost_usd:.4f}' if t.cost_usd else 'not measured'}, "
        f"GPU {f'{t.gpu_seconds:.1f}s' if t.gpu_seconds else 'not measured'}, "
        f"wall {_elapsed(s):.0f}s{' so far' if run.finished is None else ''} "
        f"(episodes side by side: {t.wall_seconds:.0f}s summed), turns {t.turns}"
    )
    if s.exit_reasons:
        console.print("exit reasons: " + ", ".join(f"{k or '?'} {v}" for k, v in sorted(s.exit_reasons.items())))
    for task_id, flags in sorted(s.flagged_tasks.items()):
        console.print(f"[yellow]flagged[/yellow] {task_id}: {', '.join(flags)} (its solutions are kept, never counted)",
                      highlight=False)


@app.command("show")
def show_command(run_id: int = typer.Argument(..., help="Run id (see `runs list`)."), db: str | None = DbOption,
                 as_json: bool = JsonOption) -> None:  # fmt: skip
    """Show one run: its summary and a line per episode."""
    with _open(db) as store:
        try:
            summary = store.run_summary(run_id)
            episodes = store.list_episodes(run_id)
        except NotFoundError as exc:
            raise fail(f"{exc} in {store.url}", 2) from exc  # an unknown run id: unusable input (docs/cli.md)
    if as_json:
        data = {"summary": summary.model_dump(mode="json"), "episodes": [e.model_dump(mode="json") for e in episodes]}
        typer.echo(json.dumps(data, indent=1))
        return
    console = Console()
    _print_summary(console, summary)
    rows = []
    stopped = summary.run.status == "interrupted"
    for e in episodes:
        speedup = f"{e.best_speedup_vs_eager:.2f}x{'*' if e.best_speedup_caveat else ''}" if e.best_speedup_vs_eager else "-"
        solved = "yes" if e.solved else ("flagged" if e.task_flags else "no")
        tokens = e.totals.prompt_tokens + e.totals.completion_tokens
        status = "interrupted" if stopped and e.status == "running" else e.status  # in flight when the run stopped
        rows.append((str(e.id), e.task_id, status, e.exit_reason or "-", solved, speedup, str(e.totals.turns),
                     str(tokens) if tokens else "-", f"{e.totals.cost_usd:.4f}" if e.totals.cost_usd else "-",
                     f"{e.totals.gpu_seconds:.1f}" if e.totals.gpu_seconds else "-"))  # "-": not measured
    columns = ("epi-\nsode", "task", "status", "exit", "solved", "best\nspeedup", "turns", "tokens", "cost\n$", "GPU\ns")
    # Task ids and numbers never wrap (an id split inside a word reads as two); on a narrow terminal the outcome and
    # the costs are two tables, each with the episode number, so that both fit whole.
    parts = [range(len(columns))] if console.width >= 110 else [range(0, 6), [0, *range(6, len(columns))]]
    for part in parts:
        table = Table(box=box.SIMPLE_HEAD, collapse_padding=True)
        for k in part:
            text = columns[k] in ("task", "status", "exit", "solved")
            whole = max((len(row[k]) for row in rows), default=0) if columns[k] != "exit" else 0
            table.add_column(columns[k], justify="left" if text else "right", no_wrap=columns[k] != "exit",
                             overflow="fold", min_width=min(whole, 48) or None)  # ids and numbers kept whole
        for row in rows:
            table.add_row(*(row[k] for k in part))
        console.print(table)
    for e in episodes:
        if e.best_speedup_caveat:
            console.print(f"* {e.task_id}: best speedup {e.best_speedup_caveat}", highlight=False, soft_wrap=True)
    for e in episodes:
        if e.exit_detail and (e.status == "failed" or e.exit_reason.startswith("model")):
            console.print(f"[red]{e.task_id}[/red] {e.exit_reason}: {e.exit_detail}", highlight=False, soft_wrap=True)


@app.command("export")
def export_command(
    run_id: int = typer.Argument(..., help="Run id (see `runs list`)."),
    out: Path = typer.Option(..., "--out", "-o", help="Output file: one kernelmosaic.trajectory/2 object per line."),
    done_only: bool = typer.Option(False, "--done-only", help="Only episodes whose loop ended normally."),
    db: str | None = DbOption,
) -> None:
    """Export every episode of a run as trajectory JSON Lines."""
    with _open(db) as store:
        try:
            count = export_run(store, run_id, out, done_only=done_only)
        except NotFoundError as exc:
            raise fail(f"{exc} in {store.url}", 2) from exc  # an unknown run id: unusable input (docs/cli.md)
        except StoreError as exc:
            raise fail(str(exc), 2) from exc
    Console(stderr=True).print(f"wrote {count} trajectories to {out}", highlight=False)
