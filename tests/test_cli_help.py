"""Every command's `--help` shows the settings sections its help texts name (`[verify]`, `[ray] extra`): typer
renders help as rich markup, which would take a bracketed word for a tag and drop it. Beside an option it shows the
type of one value, and nothing beside a flag."""

from __future__ import annotations

import re

import click
import pytest
from typer.testing import CliRunner

from kernelmosaic.cli import _COMMANDS, app, stage_command

_BRACKETED = re.compile(r"\\?\[([a-z][a-z_.]*)\]")


def _commands() -> list[tuple[list[str], object]]:
    """(argv path, command) of every command and sub-command, built as `kernelmosaic` builds them."""
    out = []

    def walk(path: list[str], command) -> None:
        out.append((path, command))
        for name, sub in sorted(getattr(command, "commands", {}).items()):
            walk([*path, name], sub)

    for name in _COMMANDS:
        walk([name], stage_command(name))
    return out


COMMANDS = _commands()


def _sections(command) -> set[str]:
    texts = [command.help or "", *(getattr(p, "help", None) or "" for p in command.params)]
    return {m.group(1) for text in texts for m in _BRACKETED.finditer(text)}


def test_help_texts_name_sections():
    named = {s for _, c in COMMANDS for s in _sections(c)}
    assert {"verify", "generate", "model", "scale", "select", "ray"} <= named, named


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_help_keeps_every_bracketed_name(path, command):
    res = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "2000", "NO_COLOR": "1"})
    assert res.exit_code == 0, res.output
    text = re.sub(r"\s+", " ", res.output)
    missing = sorted(s for s in _sections(command) if f"[{s}]" not in text)
    assert not missing, f"`kernelmosaic {' '.join(path)} --help` lost {missing}"


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_help_shows_plain_types(path, command):
    res = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "2000", "NO_COLOR": "1"})
    assert res.exit_code == 0, res.output
    odd = sorted(set(re.findall(r"<bool>|<list\[[^>]*\]>|<\w+ range>", res.output)))
    assert not odd, f"`kernelmosaic {' '.join(path)} --help` shows {odd}"
    assert re.search(r"--help +Show this message", res.output), "a flag has no type beside it"


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_help_fits_80_columns_without_cutting_a_name(path, command):
    """A newcomer's 80-column terminal: typer's rich panels cut option names and ids with an ellipsis there
    (`--compile-baseli…`); click's layout wraps the help beside them instead."""
    res = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "80", "NO_COLOR": "1"})
    assert res.exit_code == 0, res.output
    assert "…" not in res.output, res.output
    wide = [line for line in res.output.splitlines() if len(line) > 80]
    assert not wide, wide
    for param in command.params:  # every option's own name appears whole
        for name in param.opts if isinstance(param, click.Option) else []:
            assert re.search(rf"(^|[\s,/]){re.escape(name)}(\s|,|$)", res.output, re.M), (name, res.output)


@pytest.mark.parametrize("columns", ["80", "100", "120"])
def test_help_never_splits_a_word_at_its_hyphen_or_cuts_a_command_summary(columns):
    """Wrapping breaks at spaces only (`verify-` / `batch` reads as two words), and a group's command list shows each
    command's first sentence whole, not cut mid-word with "..."."""
    for path, command in COMMANDS:
        res = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": columns, "NO_COLOR": "1"})
        lines = res.output.splitlines()
        for line, after in zip(lines, lines[1:], strict=False):
            assert not (re.search(r"\w-$", line) and re.match(r"\s*\w", after)), (path, line, after)
        if getattr(command, "commands", None):
            listed = res.output.split("Commands:", 1)[1]
            assert not re.search(r"\w\.\.\.$", listed, re.M), (path, listed)


def test_an_options_type_is_shown_with_a_typer_that_has_no_display_type(monkeypatch):
    """The GPU machine's typer bundles its own click, whose options have no `display_type`: the help still builds
    (before, every command there failed with an AttributeError)."""
    import types

    import click

    from kernelmosaic.commands import _display_type

    assert _display_type(types.SimpleNamespace(type=click.INT)) == "<integer>"
    assert _display_type(types.SimpleNamespace(type=click.Path())) == "<path>"
