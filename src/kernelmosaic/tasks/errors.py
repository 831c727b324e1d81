"""Errors about task files that say which file, which line and what is wrong."""

from __future__ import annotations

from pathlib import Path

__all__ = ["TaskFormatError", "located"]


class TaskFormatError(ValueError):
    """A task file (or one row of a task table) could not be read; `str()` reads `file:line:col: problem`."""

    def __init__(self, file: str | Path, message: str, line: int = 0, col: int = 0) -> None:
        self.file = str(file)
        self.line = line
        self.col = col
        self.problem = message
        super().__init__(located(self.file, message, line, col))


def located(file: str, message: str, line: int = 0, col: int = 0) -> str:
    where = file
    if line:
        where += f":{line}"
        if col:
            where += f":{col}"
    return f"{where}: {message}"
