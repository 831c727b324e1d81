"""The `kernelmosaic` command's entry point. `kernelmosaic verify ... --json` with a verifier service running is
handed to the service whole: its command line and working directory go over the service's socket, the service runs
the same command with the same option parsing and settings code (`verify/forwarded.py`), and this process prints
what it sends back and exits with its status. Nothing of the package is imported for it (no typer, rich, pydantic or
torch: ~10 ms of start-up instead of ~0.2 s on a warm verify of about a second). Every other command, and a verify
the service declines or cannot answer, runs the full CLI (`kernelmosaic.cli`). Standard library only."""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path

from kernelmosaic.paths import CONFIG_FILE, default_cache_dir, socket_path

__all__ = ["KEPT_HERE", "forward", "main"]

KEPT_HERE = ("--set", "--config", "--alt", "--derive-alt", "--help")
"""Options whose values are read relative to this process (files, settings that may name paths), and help: the
full CLI handles them, as it does a working directory with its own settings file."""


def main() -> None:
    code = forward(sys.argv[1:])
    if code is not None:
        sys.exit(code)
    from kernelmosaic.cli import app

    app()


def forward(argv: list[str]) -> int | None:
    """The exit status of `argv` run by the verifier service, its output written here; None when it is not one to
    hand over (not `verify --json`, an option kept here) or no service took it."""
    if argv[:1] != ["verify"] or "--json" not in argv[1:] or Path(CONFIG_FILE).is_file():
        return None
    if any(a.partition("=")[0] in KEPT_HERE for a in argv[1:]):
        return None
    request = json.dumps({"op": "cli_verify", "argv": argv, "cwd": os.getcwd()}) + "\n"
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.connect(str(socket_path(default_cache_dir())))
            sock.sendall(request.encode())
            with sock.makefile("rb") as stream:
                reply = json.loads(stream.readline() or b"{}")
    except (OSError, ValueError):
        return None
    if not reply.get("ok") or not isinstance(reply.get("code"), int):
        return None  # declined (its settings would differ there) or failed: the full CLI runs it here
    sys.stdout.write(reply.get("stdout", ""))
    sys.stderr.write(reply.get("stderr", ""))
    sys.stdout.flush()
    sys.stderr.flush()
    return reply["code"]
