"""The `kernelmosaic` command: one sub-command group per stage, each defined beside its stage.

Stages are imported only when their command runs: `kernelmosaic verify` against a running verifier service is a
socket round trip, and importing every stage's CLI (torch, the store, plotting) would cost it seconds.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import importlib
import logging
import os
import sys
import threading
from typing import Any

import click
import typer
from typer.core import TyperGroup

from kernelmosaic import __version__
from kernelmosaic.commands import build_command, plain_usage_errors
from kernelmosaic.paths import PRIVATE_UMASK

__all__ = ["app", "stage_command"]

# name -> (module, attribute, kind, one-line help). kind: "command" (a function) or "group" (a typer.Typer).
_COMMANDS: dict[str, tuple[str, str, str, str]] = {
    "verify": ("kernelmosaic.verify.cli", "verify_command", "command", "Judge one candidate against one problem."),
    "verify-batch": ("kernelmosaic.verify.cli", "verify_batch_command", "command",
                     "Judge many pairs on all visible GPUs (or the CPU), resumably."),
    "verify-serve": ("kernelmosaic.verify.serve_cli", "verify_serve_command", "command",
                     "Run the local verifier service until interrupted."),
    "generate": ("kernelmosaic.agent.cli", "generate_command", "command", "Run agent episodes over a task set and record them in the store."),
    "evaluate": ("kernelmosaic.evaluate.cli", "evaluate_command", "command", "Evaluate a model or judge existing "
                                                                             "generations."),
    "report": ("kernelmosaic.evaluate.report.cli", "report_command", "command", "Write an HTML report, summary.json and summary.md for a run."),
    "loop": ("kernelmosaic.loop", "loop_command", "command", "Run the whole loop once: curate, generate, sft export, sft train, evaluate, report."),
    "tasks": ("kernelmosaic.tasks.cli", "app", "group", "List, check, audit, synthesize and convert tasks."),
    "runs": ("kernelmosaic.store.cli", "app", "group", "Inspect and export recorded runs."),
    "curate": ("kernelmosaic.curate.cli", "app", "group",
               "Find duplicates and select a diverse task subset with quotas."),
    "review": ("kernelmosaic.curate.review.cli", "app", "group",
               "Review tasks in a web page; export the accepted set; the audit log."),
    "sft": ("kernelmosaic.sft.cli", "app", "group", "Export verified trajectories as training data; fine-tune on them."),
}


class _LazyStages(TyperGroup):
    """A group whose sub-commands are built from their stage module the first time they are looked up."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in _COMMANDS:
            return None
        if cmd_name not in self.commands:
            self.commands[cmd_name] = stage_command(cmd_name)
        return self.commands[cmd_name]

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # The listing uses the short help above, so `kernelmosaic --help` imports no stage.
        with formatter.section("Commands"):
            formatter.write_dl([(name, row[3]) for name, row in _COMMANDS.items()])

    def invoke(self, ctx: click.Context) -> object:
        with plain_usage_errors():  # a sub-command's options are parsed in here
            return super().invoke(ctx)


def stage_command(name: str) -> click.Command:
    """The command (or group) `name` of `_COMMANDS`, built from its stage module."""
    module, attr, kind, short = _COMMANDS[name]
    return _checks_settings(build_command(getattr(importlib.import_module(module), attr), name, kind, short))


_STAGES_READ = {"loop": ("generate", "model", "verify", "scale", "sft.export", "sft.train")}
"""Sections a command with no `--config` of its own still reads through the commands it runs (the loop's stages read
./kernelmosaic.toml), named in its message for an unknown section."""


def _checks_settings(command: click.Command) -> click.Command:
    """Every command checks the whole settings file (docs/configuration.md): one that takes `--config` reads it
    itself, naming the sections it reads; every other one (`tasks list`, `runs list`, `review log`, ...) checks
    ./kernelmosaic.toml here before it runs, as a command that reads none of it. One file feeds every command, so a
    misspelt `[verfy]` exits 2 wherever it is met first instead of passing unnoticed."""
    subs = getattr(command, "commands", None)
    if subs is not None:
        for sub in subs.values():
            _checks_settings(sub)
        return command
    if command.callback is None or any("--config" in param.opts for param in command.params):
        return command
    run = command.callback

    @functools.wraps(run)
    def checked(*args: Any, **kwargs: Any) -> Any:
        from kernelmosaic.config import ConfigError, read_config

        try:
            read_config(reads=_STAGES_READ.get(command.name or "", ()))
        except ConfigError as exc:
            from kernelmosaic.commands import fail

            raise fail(str(exc)) from None
        return run(*args, **kwargs)

    command.callback = checked
    return command


app = typer.Typer(
    name="kernelmosaic",
    help="Write, verify, repair and optimize CUDA kernels; turn the loop into training data.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    cls=_LazyStages,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"kernelmosaic {__version__}")
        raise typer.Exit()


@app.callback()
def _main(verbose: bool = typer.Option(False, "--verbose", "-v", help="Log at DEBUG level."),
          version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    logging.basicConfig(level=logging.DEBUG if verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    os.umask(PRIVATE_UMASK)  # stores, caches, exports and reports: the owner's alone


def run() -> None:
    """The CLI, ended without the interpreter's teardown of torch and every module it loaded (1.4 s idle, 3 s on a
    loaded 2-core machine, after the command's last line): threads the command left running finish first and the
    exit handlers run (logging, Ray, temporary folders), as at a normal exit, then the process ends. A command stopped
    by Ctrl-C or SIGTERM (exit 130) has marked its run, killed its workers and printed its resume line by then: it
    waits for no thread (the README promises an exit within 3 s)."""
    try:
        app()
        code: object = 0
    except SystemExit as exc:
        code = exc.code
    if not isinstance(code, int):  # sys.exit("message") or sys.exit(None), as the interpreter treats them
        if code is not None:
            print(code, file=sys.stderr)
        code = 0 if code is None else 1
    if code != 130:
        getattr(threading, "_shutdown", lambda: None)()  # what the interpreter's exit does first: join the threads
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a reader gone (`| head`) or a stream closed
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    run()
