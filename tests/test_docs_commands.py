"""Docs that run: every `kernelmosaic ...` command shown in README.md and docs/*.md (code blocks and inline code)
parses against the CLI as written: the sub-command exists and every option it gives is one that command takes.

Placeholders (`RUN_ID`, `PATH`, `[--json]` of a synopsis) are fine: values are parsed resiliently, so only the
command path and the option names are checked, which is what goes stale when a command changes.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import typer

from kernelmosaic.cli import app

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_FENCE = re.compile(r"^[ \t]*```[^\n]*\n(.*?)^[ \t]*```", re.S | re.M)  # fences indented in a list item too
_INLINE = re.compile(r"`((?:python -m )?kernelmosaic [^`\n]+)`")


def _commands(text: str) -> list[tuple[int, str]]:
    """(line, command) of each `kernelmosaic ...` in a fenced block (continued lines joined) or an inline span."""
    found: list[tuple[int, str]] = []
    for block in _FENCE.finditer(text):
        first = text.count("\n", 0, block.start(1)) + 1
        lines = block.group(1).replace("\\\n", " ").split("\n")
        for k, line in enumerate(lines):
            line = re.sub(r"^\s*(\$\s+)?", "", line)
            match = re.match(r"(?:.*&&\s*)?((?:python3? -m )?kernelmosaic\s.*)", line)
            if match:
                found.append((first + k, match.group(1)))
    outside = _FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    for match in _INLINE.finditer(outside):
        found.append((outside.count("\n", 0, match.start()) + 1, match.group(1)))
    return found


def _words(command: str) -> list[str]:
    """The command's arguments after `kernelmosaic`, a synopsis's brackets and alternatives taken as written."""
    command = re.split(r"\s#\s|\s#$|\s+\|\s+|\s*[;&]{1,2}\s|\s[<>]\s?\S+", command)[0]
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    words = words[words.index("kernelmosaic") + 1:]
    out = []
    for word in words:
        word = word.strip("[]")
        if word and word not in ("...", "…") and not word.endswith("..."):
            out.append(word.split("|")[0] if word.startswith("-") else word)
    return out


def _unknown_options(command, words: list[str]) -> list[str]:
    """Words of `words` that look like options (`--x`, `--x=v`, `-x`) and are none of `command`'s."""
    names = {"--help"} | {name for p in command.params for name in (*p.opts, *getattr(p, "secondary_opts", ()))}
    return [w for w in words if re.match(r"-{1,2}[A-Za-z]", w) and w.split("=")[0] not in names]


def _check(words: list[str]) -> str:
    """"" when `words` parse against the CLI; otherwise what is wrong. (typer carries its own click: its commands
    are matched by what they do, `list_commands` for a group.)"""
    command = typer.main.get_command(app)
    ctx = None
    path = ["kernelmosaic"]
    while True:
        try:
            ctx = command.make_context(" ".join(path), list(words), parent=ctx, resilient_parsing=True)
        except Exception as exc:  # typer's click's UsageError
            return f"{' '.join(path)}: {getattr(exc, 'format_message', exc.__str__)()}"
        rest = [*getattr(ctx, "_protected_args", ()), *ctx.args]  # a group keeps the sub-command's name apart
        given = words[:len(words) - len(rest)] if hasattr(command, "list_commands") else words
        unknown = _unknown_options(command, given)
        if unknown:
            return f"{' '.join(path)}: No such option: {', '.join(unknown)}"
        if not hasattr(command, "list_commands") or not rest:
            return ""
        sub = command.get_command(ctx, rest[0])
        if sub is None:
            return f"{' '.join(path)}: no command {rest[0]!r} (known: {', '.join(command.list_commands(ctx))})"
        path.append(rest[0])
        command, words = sub, rest[1:]


CASES = [(doc, line, command) for doc in DOCS for line, command in _commands(doc.read_text(encoding="utf-8"))]


def test_the_docs_show_commands():
    assert len(CASES) > 40, "the extraction found too few commands: the docs' code blocks changed shape"


@pytest.mark.parametrize(("doc", "line", "command"), CASES,
                         ids=[f"{d.name}:{line}" for d, line, _ in CASES])
def test_every_documented_command_parses(doc, line, command):
    words = _words(command.replace("\\|", "|"))
    # a table's `runs list|show|export` names several sub-commands: each must exist
    at = next((k for k, w in enumerate(words) if "|" in w and not w.startswith("-")), None)
    variants = [words] if at is None else [[*words[:at], w, *words[at + 1:]] for w in words[at].split("|")]
    problem = "; ".join(filter(None, map(_check, variants)))
    assert not problem, f"{doc.relative_to(ROOT)}:{line}: `{command}`: {problem}"


@pytest.mark.parametrize(("words", "expected"), [
    (["tasks", "list", "--tasks", "builtin"], "No such option: --tasks"),
    (["verify", "p.py", "c.py", "--no-such-flag"], "No such option"),
    (["nonsense"], "no command 'nonsense'"),
    (["runs", "shw"], "no command 'shw'"),
])
def test_the_check_catches_stale_commands(words, expected):
    assert expected in _check(words)
