"""The two commands under test, as `kernelmosaic` registers them (src/kernelmosaic/cli.py), run in-process."""

from __future__ import annotations

import re

import typer
from typer.testing import CliRunner

from kernelmosaic.evaluate.cli import evaluate_command
from kernelmosaic.evaluate.report.cli import report_command

# The two commands as `kernelmosaic` registers them (src/kernelmosaic/cli.py), without importing every stage's CLI.
app = typer.Typer(pretty_exceptions_enable=False)
app.command("evaluate")(evaluate_command)
app.command("report")(report_command)

def invoke(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    if result.exit_code != 0:
        raise AssertionError(f"kernelmosaic {' '.join(args)} exited {result.exit_code}:\n{result.output}\n{result.exception!r}")
    return result.output


def run_id_of(output: str) -> int:
    return int(re.search(r"evaluation run (\d+)", output).group(1))
