"""How a stage's typer command becomes a click command with the help and errors the CLI shows: click's help layout,
plain type hints, refused option values worded without pydantic's prefix; and `fail`, every command's error line.
The top-level CLI builds every
stage with it; the verifier service builds `verify` with it for a handed-over client (verify/forwarded.py). Imports
no stage."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any, Literal

import click
import rich.console
import typer
from rich.markup import escape
from typer.core import TyperArgument, TyperOption

__all__ = ["Console", "Device", "build_command", "plain_usage_errors", "fail"]

Device = Annotated[Literal["cuda", "cpu"] | None, typer.Option(
    "--device", help="cuda or cpu (the CPU judges C++ load_inline candidates). Default: the settings' device (the "
                     "command's own section, then [verify] device), then, for a replayed model, the device it was "
                     "recorded on, then cuda when a GPU is visible, else cpu.")]
"""Every command's `--device` (one precedence: verify/settings.py `run_device`)."""


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print `error: MESSAGE` on stderr, one line whatever the terminal's width, `[section]` names kept (no markup,
    no emoji codes); return the exit to raise (2: unusable input, docs/exit-codes.md)."""
    rich.console.Console(stderr=True).print(f"[red]error:[/red] {escape(message)}", highlight=False, soft_wrap=True,
                                            emoji=False)
    return typer.Exit(code)


def build_command(target: Callable | typer.Typer, name: str, kind: str, short: str = "") -> click.Command:
    """The click command of a stage's typer function (`kind` "command") or app (`kind` "group"), named `name`."""
    if kind == "group":
        command = typer.main.get_group(target)  # type: ignore[arg-type]
        command.help = command.help or short
    else:
        holder = typer.Typer(pretty_exceptions_enable=False)
        holder.command(name)(target)
        command = typer.main.get_command(holder)
    command.name = name
    _plain_help(command)
    _escape_help(command)
    _plain_types(command)
    return command


@contextmanager
def plain_usage_errors() -> Iterator[None]:
    """An option value typer refuses reads `Invalid value for '--device': 'tpu' is not one of 'cuda', 'cpu'.`:
    typer checks choices inside pydantic, whose message would start `Value error, `."""
    try:
        yield
    except typer.BadParameter as exc:
        exc.message = exc.message.removeprefix("Value error, ")
        raise


def _wrap_at_spaces() -> None:
    """Click (and the copy of it typer carries, which formats our help) wraps help text with textwrap, which also
    breaks inside a hyphenated word, so `verify-batch` or `--no-timing` could end one line and begin the next. Their
    wrapper classes split words with textwrap's hyphen-free pattern instead (a class attribute of their own
    subclasses; tests/test_cli_help.py checks every help page at three widths)."""
    import importlib
    import textwrap

    for name in ("typer._click._textwrap", "click._textwrap"):
        try:
            wrapper = importlib.import_module(name).TextWrapper
        except (ImportError, AttributeError):
            continue
        wrapper.wordsep_re = textwrap.TextWrapper.wordsep_simple_re


_wrap_at_spaces()


def _plain_help(command: click.Command) -> None:
    """Help in click's own layout (options, then their help wrapped beside them, a long option on a line of its own)
    for the command and its sub-commands: typer's rich panels give an 80-column terminal an options column of ~40
    and cut option names and ids in the help with an ellipsis (`--compile-baseli…`, `replay:FILE|bund…`)."""
    if hasattr(command, "rich_markup_mode"):
        command.rich_markup_mode = None  # type: ignore[attr-defined]
    for sub in getattr(command, "commands", {}).values():
        if not sub.short_help and sub.help:  # click cuts the default one to fit a line, mid-word, with "..."
            sub.short_help = _first_sentence(sub.help)
        _plain_help(sub)


def _first_sentence(text: str) -> str:
    """The first sentence of a help text's first paragraph, whole: what a group's command list shows (wrapped)."""
    paragraph = " ".join(text.strip().split("\n\n")[0].split())
    end = re.search(r"\.(\s|$)", paragraph)
    return paragraph[: end.start() + 1] if end else paragraph


def _escape_help(command: click.Command) -> None:
    """Help texts name settings sections (`[verify]`, `[ray] extra`); typer renders help as rich markup, which
    would take them for tags and drop them, so every help text of the command, its options and its sub-commands
    is escaped once, here, and written in the source as plain text."""
    if getattr(command, "rich_markup_mode", None) is None:
        return  # plain click help: brackets print as written
    command.help = escape(command.help) if command.help else command.help
    for param in command.params:
        if getattr(param, "help", None):
            param.help = escape(param.help)  # type: ignore[attr-defined]
    for sub in getattr(command, "commands", {}).values():
        _escape_help(sub)


def _display_type(param: TyperOption) -> str:
    """typer's shown type of an option (`<int>`, `<list[str]>`); from the option's click type where this typer has no
    `display_type` (typer releases that bundle their own click: the GPU machine's image, 2026-12-06)."""
    if hasattr(param, "display_type"):
        return param.display_type(None)
    return f"<{getattr(param.type, 'name', 'text')}>"


def _plain_types(command: click.Command) -> None:
    """typer's help shows a type beside every option: `<bool>` beside a flag, `<list[str]>` beside a repeatable option,
    `<int range>` before the bounds. Here a flag shows none (its name says it: --timing/--no-timing), a repeatable
    option the type of one value, a bounded number its type; every option of the command and its sub-commands. An
    argument is named in capitals, as the docs write it (`{PROBLEM}` in typer's usage line, not `{problem}`)."""
    for param in command.get_params(command.context_class(command)):  # --help too: get_params builds it, and keeps it
        if isinstance(param, TyperOption) and param.metavar is None:
            shown = "" if param.is_flag else re.sub(r"^<list\[(.*)\]>$", r"<\1>", _display_type(param))
            param.metavar = shown.replace(" range>", ">").replace("<Path>", "<path>")
        elif isinstance(param, TyperArgument) and param.metavar is None and param.name:
            param.metavar = param.name.upper()  # typer adds the brackets: {REQUIRED}, [OPTIONAL], ... for many
    for sub in getattr(command, "commands", {}).values():
        _plain_types(sub)


class Console(rich.console.Console):
    """The CLI's console. A message printed `soft_wrap=True` (one line in a log, for grep) is wrapped at spaces on a
    terminal instead of at the terminal's edge, so no word, id or command is split across two lines there."""

    def print(self, *objects: Any, soft_wrap: bool | None = None, **kwargs: Any) -> None:  # type: ignore[override]
        if soft_wrap and self.is_terminal:
            soft_wrap = False
        super().print(*objects, soft_wrap=soft_wrap, **kwargs)

    @contextmanager
    def phases(self, first: str, prefix: str) -> Iterator[Callable[[str], None]]:
        """A spinner naming the current phase on a terminal; piped (a log, CI), one line per phase on stderr, so a
        long command is never silent. Yields the function that moves to the next phase."""
        if self.is_terminal:
            with self.status(first) as status:
                yield status.update
            return
        err = rich.console.Console(stderr=True, highlight=False, soft_wrap=True)
        started = time.monotonic()

        def say(what: str) -> None:
            err.print(f"{prefix}: {what} ({time.monotonic() - started:.0f} s)", markup=False)

        say(first)
        yield say
