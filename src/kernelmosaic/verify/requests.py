"""What a caller hands the verifier besides the problem and candidate, and the error for an unusable input.

Light on purpose (pydantic, no torch): the `verify` client and the verifier service's protocol use them without
loading the verifier itself.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from kernelmosaic.contracts.precision import Precision

__all__ = ["Alternative", "InputError", "read_input"]


class InputError(ValueError):
    """An input file was unusable (exit status 2 of `verify`)."""


def read_input(path: Path, what: str) -> str:
    """The text of an input file; an unreadable one is an `InputError` naming `what` and the path."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{what} {path}: cannot be read ({exc})") from exc


class Alternative(BaseModel):
    """One alternative problem: the task at other sizes (a problem file with its constants changed) and/or in
    another precision."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    label: str
    """How reports name it, e.g. `batch_size=13, dim=3583` or `bf16`."""
    problem: Path
    """A KernelBench-format problem file for this alternative."""
    precision: Precision | None = None
    """Precision to judge it in; None: the run's own."""
