"""`kernelmosaic review serve|export|log`: the review page, the accepted set in task formats, the audit log."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.markup import escape
from rich.table import Table

from kernelmosaic.commands import Console, fail
from kernelmosaic.store.backends import ENV_VAR
from kernelmosaic.store.errors import StoreError
from kernelmosaic.store.reviews import ReviewLog
from kernelmosaic.store.store import Store, open_store
from kernelmosaic.tasks.errors import TaskFormatError
from kernelmosaic.tasks.schema import Task

if TYPE_CHECKING:
    from kernelmosaic.curate.review.app import ServeConfig

__all__ = ["app"]

app = typer.Typer(no_args_is_help=True)
console = Console()
err = Console(stderr=True)
TOKEN_ENV = "KERNELMOSAIC_REVIEW_TOKEN"
DbOption = typer.Option(None, "--db", envvar=ENV_VAR, show_envvar=False,
                        help=f"Database URL; default ${ENV_VAR} or ./kernelmosaic.db.")
TasksOption = typer.Option("builtin", "--tasks", help="Task source: builtin, a folder, a .parquet, kernelbench:PATH.")




def _open(db: str | None) -> Store:
    try:
        return open_store(db)
    except StoreError as exc:
        raise fail(str(exc)) from None


def _load(source: str) -> list[Task]:
    from kernelmosaic.tasks.sources import load_tasks

    try:
        tasks = load_tasks(source)
    except TaskFormatError as exc:
        raise fail(str(exc)) from None
    if len({t.id for t in tasks}) != len(tasks):
        raise fail(f"{source}: task ids are not unique")
    return tasks


def _serve_config(config_file: Path | None, sets: list[str], flags: dict[str, object]) -> tuple[ServeConfig, str]:
    """`[review]` of the settings file, then --set review.KEY=VALUE, then the flags; and where the token came from."""
    from kernelmosaic.config import ConfigError, build, read_config
    from kernelmosaic.curate.review.app import ServeConfig

    try:
        tree = read_config(config_file, sets)
        config = build(ServeConfig, tree, "review", flags=flags)
    except ConfigError as exc:
        raise fail(str(exc)) from None
    if flags.get("token"):
        return config, f"--token / ${TOKEN_ENV}"
    if config.token:
        where = tree.get("__file__", "--set")
        if where != "--set" and Path(where).stat().st_mode & 0o077:
            err.print(f"[yellow]warning:[/yellow] {escape(where)} holds the review token and other users can read "
                      f"it: chmod 600 {escape(where)}", highlight=False, soft_wrap=True)
        return config, f"[review] token of {where}"
    return config, ""


@app.command("serve")
def serve_command(
    tasks: str = TasksOption,
    db: str | None = DbOption,
    host: str | None = typer.Option(None, help="Address to bind (default 127.0.0.1); beyond loopback use a TLS proxy."),
    port: int | None = typer.Option(None, help="Port (default 8765)."),
    token: str = typer.Option("", envvar=TOKEN_ENV, show_envvar=False,
                              help=f"Access token (or ${TOKEN_ENV}, or [review] token in the settings file); "
                                   "generated and printed when none is given."),
    config_file: Path | None = typer.Option(None, "--config", help="Settings file (TOML; default ./kernelmosaic.toml "
                                            "when present): its [review] section."),
    sets: list[str] = typer.Option([], "--set", help="Override one [review] field, e.g. --set review.port=9000."),
    against: str = typer.Option("", help="Evaluation set to show decontamination against (a task source)."),
    audit: bool = typer.Option(False, help="First audit tasks without a fresh report (isolated workers)."),
    jobs: int = typer.Option(2, help="Audit worker processes (with --audit)."),
) -> None:
    """Serve the review page over the store: queue, forms side by side, checks, decisions by key. Every request
    needs the token: open the printed link once (it sets a cookie), or send `Authorization: Bearer TOKEN`."""
    import uvicorn

    from kernelmosaic.curate.review.app import create_app
    from kernelmosaic.curate.review.auth import serving_token
    from kernelmosaic.curate.review.build import build_board

    config, token_from = _serve_config(config_file, sets, {"host": host, "port": port, "token": token or None})
    try:
        title = config.title if "title" in config.model_fields_set else f"KernelMosaic review · {tasks}"
        config = config.model_copy(update={"token": serving_token(config.token), "title": title})
    except ValueError as exc:
        raise fail(str(exc)) from None
    pool = _load(tasks)
    against_tasks = _load(against) if against else None
    store = _open(db)
    with console.phases("preparing the review (duplicates, decontamination, audits)", "review"):
        board = build_board(pool, ReviewLog(store), against_tasks, against, audit, jobs)
    base = f"http://{config.host if ':' not in config.host else f'[{config.host}]'}:{config.port}/"
    link = f"{base}?token={config.token}" if not token_from else f"{base}?token=TOKEN (the token of {token_from})"
    console.print(f"reviewing {len(pool)} tasks from {tasks}; decisions go to {store.url}\nopen {link}",
                  highlight=False, soft_wrap=True, markup=False)
    server = uvicorn.Server(uvicorn.Config(create_app(board, config), host=config.host, port=config.port,
                                           log_level="warning"))
    def stopped(signum, frame):  # uvicorn shuts down gracefully, then raises the signal it caught again: here
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, stopped)
    try:
        server.run()  # until Ctrl-C or SIGTERM
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
    if server.started:  # every decision is already in the store: it is written as it is made
        Console(stderr=True).print(f"interrupted: the review page stopped; decisions are in {store.url}",
                                   highlight=False, soft_wrap=True, markup=False)
        raise typer.Exit(130)
    raise typer.Exit(2)  # it never listened (the address is taken or not this machine's): uvicorn said why


@app.command("export")
def export_command(
    out: Path = typer.Option(..., "--out", help="Output folder: the accepted tasks plus decisions.jsonl."),
    tasks: str = TasksOption,
    db: str | None = DbOption,
    fmt: str = typer.Option("folder", "--format", help="folder, parquet (= hf), kernelbench, kernelbench-hf."),
) -> None:
    """Write the accepted tasks (reviewers' edits applied, review recorded) and every decision about them."""
    from kernelmosaic.curate.review.state import edited_task, review_states
    from kernelmosaic.tasks.sources import EXPORT_FORMATS, export_tasks

    if fmt not in EXPORT_FORMATS:
        raise fail(f"unknown format {fmt!r} (known: {', '.join(EXPORT_FORMATS)})")
    pool = _load(tasks)
    with _open(db) as store:
        events = ReviewLog(store).events([t.id for t in pool])
    states = review_states(events, {t.id: t.hashes.reference for t in pool})
    accepted = [edited_task(t, states[t.id]) for t in pool if states[t.id].status == "accepted"]
    if not accepted:
        raise fail(f"no task from {tasks} is accepted in the review (see `kernelmosaic review log`)", 1)
    export_tasks(accepted, fmt, out, f"KernelMosaic reviewed tasks from {tasks}")
    with open(out / "decisions.jsonl", "w", encoding="utf-8") as fh:
        for event in events:
            fh.write(event.model_dump_json() + "\n")
    counts = {s: sum(r.status == s for r in states.values()) for s in ("accepted", "pending", "needs-edit", "rejected")}
    console.print(f"exported {len(accepted)} accepted tasks as {fmt} to {out} with {len(events)} log entries "
                  f"({', '.join(f'{k} {v}' for k, v in counts.items())})", highlight=False)


@app.command("log")
def log_command(db: str | None = DbOption, task: str = typer.Option("", help="Only this task."),
                as_json: bool = typer.Option(False, "--json", help="One JSON object per line.")) -> None:
    """Print the review's append-only audit log, oldest first."""
    with _open(db) as store:
        events = ReviewLog(store).events([task] if task else None)
    if as_json:
        for event in events:
            typer.echo(event.model_dump_json())
        return
    table = Table(title=f"{len(events)} review log entries in {store.url}")
    for col in ("#", "when (UTC)", "reviewer", "task", "what", "reason / change"):
        table.add_column(col, overflow="fold")
    for e in events:
        what = e.decision if e.kind == "decision" else "edit"
        detail = e.reason if e.kind == "decision" else json.dumps({k: v.new for k, v in e.changes.items()})[:200]
        table.add_row(str(e.id), e.created.strftime("%Y-%m-%d %H:%M:%S"), e.reviewer, e.task_id, what or "", detail)
    console.print(table)
