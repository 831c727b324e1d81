"""What a sanitizer run must show to pass: each compute-sanitizer tool's weight (its errors reject the candidate or
only flag it) and the one rule for a tool's clean run, used by the verifier when it sanitizes and by
`contracts.verified` when it decides what counts as verified."""

from __future__ import annotations

from typing import Any

__all__ = ["TOOLS", "tool_passed"]

TOOLS = {"memcheck": "reject", "racecheck": "reject", "synccheck": "reject", "initcheck": "flag"}


def tool_passed(name: str, result: dict[str, Any] | None) -> bool:
    """One tool's report: it finished the forward (its summary read, exit status 0) and, where its errors reject
    (`TOOLS`), found none. The one rule for a clean run here and for a pass in `contracts.verified`."""
    return isinstance(result, dict) and result.get("exit") == 0 and result.get("errors") is not None \
        and (TOOLS[name] != "reject" or result["errors"] == 0)
