"""`verify`'s progress line follows the worker requests (their DEBUG records) and leaves the logging as it found it."""

from __future__ import annotations

import io
import logging

from rich.console import Console

from kernelmosaic.verify.pool import calls_log
from kernelmosaic.verify.progress import phase_progress


def test_the_line_names_the_phase_and_logging_is_restored():
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=100)
    before = (calls_log.level, calls_log.propagate, list(calls_log.handlers))
    with phase_progress(console, "verifying c.py on cpu"):
        calls_log.debug("candidate %s", "run")
        calls_log.debug("reference %s", "no_such_op")
    text = out.getvalue()
    assert "verifying c.py on cpu: checking correctness" in text
    assert "verifying c.py on cpu: no_such_op" in text, "an op without a name shows as itself"
    assert (calls_log.level, calls_log.propagate, list(calls_log.handlers)) == before
    assert not calls_log.isEnabledFor(logging.DEBUG) or logging.getLogger().isEnabledFor(logging.DEBUG)


def test_nothing_is_drawn_when_the_console_is_not_a_terminal():
    out = io.StringIO()
    with phase_progress(Console(file=out, force_terminal=False), "verifying"):
        calls_log.debug("candidate run")
    assert out.getvalue() == ""
