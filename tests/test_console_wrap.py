"""The CLI's console (`kernelmosaic.commands.Console`): a one-line message (`soft_wrap=True`) stays one line when
piped, for grep, and on a terminal is wrapped at spaces, never inside a word, an id or a command."""

from __future__ import annotations

import io

from kernelmosaic.commands import Console

MESSAGE = ("interrupted: run 12 stopped; every finished episode is stored; resume: kernelmosaic evaluate --resume 12 "
           "--db sqlite:///runs/evaluation-store.db on device cpu with policy kernelbench")


def _print(terminal: bool) -> str:
    out = io.StringIO()
    Console(file=out, width=40, force_terminal=terminal, color_system=None).print(MESSAGE, soft_wrap=True,
                                                                                  highlight=False)
    return out.getvalue()


def test_a_one_line_message_wraps_at_spaces_on_a_terminal_and_stays_one_line_piped():
    piped = _print(False)
    assert piped == MESSAGE + "\n"
    shown = _print(True)
    lines = shown.splitlines()
    assert len(lines) > 1 and all(len(line) <= 40 for line in lines), shown
    assert " ".join(shown.split()) == MESSAGE  # every word whole, in order
    assert all(word in MESSAGE.split() for line in lines for word in line.split())


def test_the_loops_stage_header_shows_the_whole_command_at_80_columns(tmp_path):
    """`kernelmosaic loop` names each stage's command on a line of its own, wrapped at spaces: in the rule's title it
    was cut with "…" at 80 columns (a newcomer trial saw `--set sft.train.model=runs/loop/tiny-…`)."""
    from kernelmosaic.loop import _stage

    folder = tmp_path / "a_folder_whose_name_is_long_enough_to_pass_eighty_columns_on_its_own" / "tasks"
    out = io.StringIO()
    console = Console(file=out, width=80, force_terminal=True, color_system=None)
    assert _stage(console, "1/6 tasks", ["tasks", "list", str(folder)], ok=(0, 2)) == 2  # no such folder: exit 2
    shown = out.getvalue()
    assert "…" not in shown and all(len(line) <= 80 for line in shown.splitlines()), shown
    assert str(folder) in shown.replace("\n", "") and "1/6 tasks" in shown
