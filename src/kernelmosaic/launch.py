"""The `kernelmosaic` command's entry point. `kernelmosaic verify ... --json` with a verifier service running is
handed to the service whole (its socket and folder found this user's alone, `paths.not_private`): its command line
and working directory go over the service's socket, the service runs
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

from kernelmosaic.handover import handed_over
from kernelmosaic.paths import CONFIG_FILE, PRIVATE_UMASK, default_cache_dir, not_private, socket_path

__all__ = ["forward", "main"]

def main() -> None:
    os.umask(PRIVATE_UMASK)  # what the command writes is its owner's alone
    code = forward(sys.argv[1:])
    if code is not None:
        sys.exit(code)
    from kernelmosaic.cli import run

    run()


def forward(argv: list[str]) -> int | None:
    """The exit status of `argv` run by the verifier service, its output written here; None when it is not one to
    hand over (not `verify --json`, an option kept here) or no service took it."""
    if not handed_over(argv) or Path(CONFIG_FILE).is_file():
        return None
    path = socket_path(default_cache_dir())
    if not path.exists() or not_private(path.parent, "folder") or not_private(path, "socket"):
        return None  # no service, or a socket that is not this user's alone: the full CLI says which
    request = json.dumps({"op": "cli_verify", "argv": argv, "cwd": os.getcwd()}) + "\n"
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.connect(str(path))
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
