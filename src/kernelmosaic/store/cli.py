"""`kernelmosaic runs ...` (filled in by the store stage)."""

import typer

__all__ = ["app"]

app = typer.Typer(no_args_is_help=True)
