"""Which `kernelmosaic` command lines the thin entry point (`launch.py`) hands to the verifier service whole, and
the service runs for it (`verify/forwarded.py`): one rule for both sides. Standard library only."""

from __future__ import annotations

__all__ = ["KEPT_HERE", "handed_over"]

KEPT_HERE = ("--config", "--alt", "--help")
"""Options read relative to this process (files), and help: the full CLI handles them, as it does a `--set` of the
build cache (a path, and another service's) and a working directory with its own settings file."""


def handed_over(argv: list[str]) -> bool:
    """Whether `argv` is a command the verifier service runs for this process (the service asks the same)."""
    if argv[:1] != ["verify"] or "--json" not in argv[1:]:
        return False
    for k, arg in enumerate(argv[1:], start=1):
        option, _, value = arg.partition("=")
        if option in KEPT_HERE:
            return False
        if option == "--set" and "cache_dir" in (value or (argv[k + 1] if k + 1 < len(argv) else "")):
            return False
    return True
