"""`kernelmosaic loop`: the whole pipeline once, each stage as its own command, on embedded defaults.

curate (near-duplicates among the tasks) -> generate (episodes, every candidate verified) -> sft export (verified
episodes as training data) -> report (the three gates, plots). Each stage runs as a child `kernelmosaic` process,
exactly what a user would type, so the loop shows nothing the stage commands cannot do on their own.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import typer
from rich.console import Console

__all__ = ["loop_command"]


def _stage(console: Console, title: str, args: list[str], ok: tuple[int, ...] = (0,)) -> int:
    console.rule(f"[bold]{title}[/bold]: kernelmosaic {' '.join(args)}")
    code = subprocess.run([sys.executable, "-m", "kernelmosaic.cli", *args], check=False).returncode
    if code not in ok:
        Console(stderr=True).print(f"[red]error:[/red] `kernelmosaic {args[0]}` exited {code}; the loop stops here.")
        raise typer.Exit(code)
    return code


def loop_command(
    out: Path = typer.Option(Path("runs/loop"), "--out", help="Folder for the training data and the report."),
    tasks: str = typer.Option("builtin", "--tasks", help="Task source (builtin, a folder, kernelbench:PATH, ...)."),
    model: str = typer.Option("replay:bundled", "--model", help="Model spec (default: the bundled hand-written "
                              "demonstrations, replayed and verified again)."),
    device: str | None = typer.Option(None, "--device", help="cuda or cpu (default: the replay's, else CUDA when present)."),
    db: str | None = typer.Option(None, "--db", envvar="KERNELMOSAIC_DB", help="Store (default ./kernelmosaic.db)."),
) -> None:
    """Run the whole loop once: curate -> generate -> sft export -> report (a few minutes on a CPU)."""
    from kernelmosaic.store import open_store

    console = Console()
    store_args = ["--db", db] if db else []
    found = _stage(console, "1/4 curate", ["curate", "duplicates", tasks], ok=(0, 1))
    if found == 1:
        console.print("near-duplicate clusters above are reported, not removed: `kernelmosaic curate select` picks a "
                      "diverse subset", highlight=False)
    _stage(console, "2/4 generate", ["generate", "--tasks", tasks, "--model", model, "--no-live", *store_args,
                                     *(["--device", device] if device else [])])
    with open_store(db, create=False) as store:
        run = store.latest_run()
    assert run is not None  # generate just created it
    _stage(console, "3/4 sft export", ["sft", "export", "--run", str(run.id), "--out", str(out / "sft"), *store_args])
    _stage(console, "4/4 report", ["report", str(run.id), "--out", str(out / "report"), *store_args])
    console.rule("[bold]done[/bold]")
    console.print(f"run {run.id}: trajectories and verdicts in the store ({store.url}); training data in {out / 'sft'} "
                  f"(README.md is its card); report in {out / 'report' / 'report.html'}", highlight=False)
