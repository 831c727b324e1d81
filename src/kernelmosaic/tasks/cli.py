"""`kernelmosaic tasks ...` (filled in by the tasks stage)."""

import typer

__all__ = ["app"]

app = typer.Typer(no_args_is_help=True)
