"""The `kernelmosaic` command: one sub-command group per stage, each defined beside its stage."""

from __future__ import annotations

import logging

import typer

from kernelmosaic import __version__
from kernelmosaic.agent.cli import generate_command
from kernelmosaic.curate.cli import app as curate_app
from kernelmosaic.curate.review.cli import app as review_app
from kernelmosaic.evaluate.cli import evaluate_command
from kernelmosaic.evaluate.report.cli import report_command
from kernelmosaic.loop import loop_command
from kernelmosaic.sft.cli import app as sft_app
from kernelmosaic.store.cli import app as runs_app
from kernelmosaic.tasks.cli import app as tasks_app
from kernelmosaic.verify.cli import verify_batch_command, verify_command, verify_serve_command

__all__ = ["app"]

app = typer.Typer(
    name="kernelmosaic",
    help="Write, verify, repair and optimize CUDA kernels; turn the loop into training data.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.command("verify")(verify_command)
app.command("verify-batch")(verify_batch_command)
app.command("verify-serve")(verify_serve_command)
app.command("generate")(generate_command)
app.command("evaluate")(evaluate_command)
app.command("report")(report_command)
app.command("loop")(loop_command)
app.add_typer(tasks_app, name="tasks", help="List, check, audit, synthesize and convert tasks.")
app.add_typer(runs_app, name="runs", help="Inspect and export recorded runs.")
app.add_typer(curate_app, name="curate", help="Find duplicates and select a diverse task subset with quotas.")
app.add_typer(review_app, name="review", help="Review tasks in a web page; export the accepted set; the audit log.")
app.add_typer(sft_app, name="sft", help="Export verified trajectories as training data; fine-tune on them.")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"kernelmosaic {__version__}")
        raise typer.Exit()


@app.callback()
def _main(verbose: bool = typer.Option(False, "--verbose", "-v", help="Log at DEBUG level."),
          version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    logging.basicConfig(level=logging.DEBUG if verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s")


if __name__ == "__main__":
    app()
