"""`kernelmosaic generate` (filled in by the agent stage)."""

import typer

__all__ = ["generate_command"]


def generate_command() -> None:
    """Run agent episodes over a task set (not built yet)."""
    raise typer.Exit(2)
