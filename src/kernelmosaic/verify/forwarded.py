"""A client's `kernelmosaic verify ... --json`, run inside the verifier service (`kernelmosaic.launch` sends it):
the same command, option parsing and settings code as the full CLI, with the client's working directory for its
paths and settings file, and what it prints captured for the client. The command judges through the service's own
socket like any client, so it takes the same warm verifier and the same refusals: a request the service declines
(weaker checks than its own, another build cache) is declined back to the client, which judges in its own process;
a forwarded command never judges inside the service process. A working directory with its own settings file is
declined as the client itself declines it."""

from __future__ import annotations

import io
import sys
import threading
from contextlib import contextmanager
from pathlib import Path

from kernelmosaic.config import WORKDIR
from kernelmosaic.handover import handed_over
from kernelmosaic.paths import CONFIG_FILE, default_cache_dir

__all__ = ["run_verify"]

_LOCAL = threading.local()
_INSTALL = threading.Lock()


class _Routed(io.TextIOBase):
    """The service's stdout or stderr: a thread running a forwarded command writes to its own buffer, every other
    thread to the stream this one replaced."""

    def __init__(self, stream, name: str) -> None:
        self.stream, self.name = stream, name

    def _target(self):
        return getattr(_LOCAL, self.name, None) or self.stream

    def write(self, text: str) -> int:
        return self._target().write(text)

    def flush(self) -> None:
        self._target().flush()

    def isatty(self) -> bool:
        return self._target() is self.stream and self.stream.isatty()

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        if self._target() is not self.stream:
            raise io.UnsupportedOperation("a forwarded command's output has no file descriptor")
        return self.stream.fileno()

    @property
    def encoding(self) -> str:
        return getattr(self.stream, "encoding", None) or "utf-8"

    @property
    def errors(self) -> str:
        return getattr(self.stream, "errors", None) or "strict"


@contextmanager
def _captured():
    with _INSTALL:  # once per process; streams swapped later (a test's capture) are wrapped again
        if not isinstance(sys.stdout, _Routed):
            sys.stdout = _Routed(sys.stdout, "stdout")
        if not isinstance(sys.stderr, _Routed):
            sys.stderr = _Routed(sys.stderr, "stderr")
    _LOCAL.stdout, _LOCAL.stderr = io.StringIO(), io.StringIO()
    try:
        yield _LOCAL.stdout, _LOCAL.stderr
    finally:
        _LOCAL.stdout = _LOCAL.stderr = None


def run_verify(argv: list[str], cwd: Path, service_cache: Path) -> dict:
    """`argv` (starting with `verify`) run here for a client in `cwd`: {"ok", "code", "stdout", "stderr"}, or
    {"ok": False, "declined": why} when the command would not see the settings it sees in the client."""
    import typer

    from kernelmosaic.commands import build_command, plain_usage_errors
    from kernelmosaic.verify.cli import verify_command
    from kernelmosaic.verify.service_errors import ServiceUnavailable

    if not handed_over(argv):
        return {"ok": False, "declined": "only `verify --json` without file options is run for a client"}
    if (Path(cwd) / CONFIG_FILE).exists():
        return {"ok": False, "declined": f"{Path(cwd) / CONFIG_FILE}: a working directory with its own settings file "
                "is judged by the client"}
    if default_cache_dir().resolve() != Path(service_cache).resolve():
        # the client found this service at its default cache; here the default is another one
        return {"ok": False, "declined": "this service's default build cache is not the one it serves"}
    command = build_command(verify_command, "verify", "command")
    token = WORKDIR.set(Path(cwd))
    code = 0
    with _captured() as (out, err):
        try:
            with plain_usage_errors():  # as the full CLI words a refused option value
                ctx = command.make_context("kernelmosaic verify", list(argv[1:]))
            for name, value in list(ctx.params.items()):  # paths are the client's, relative to its directory
                if isinstance(value, Path) and not value.is_absolute():
                    ctx.params[name] = Path(cwd) / value
            with ctx:
                command.invoke(ctx)
        except ServiceUnavailable as exc:  # declined by the service (verify/cli.py never judges here instead)
            return {"ok": False, "declined": str(exc)}
        except typer.Exit as exc:
            code = exc.exit_code
        except typer.Abort:
            code = 1
        except Exception as exc:  # a usage error (typer's click): shown as the full CLI shows it
            if not (hasattr(exc, "show") and isinstance(getattr(exc, "exit_code", None), int)):
                raise
            exc.show(file=err)
            code = exc.exit_code
        finally:
            WORKDIR.reset(token)
        return {"ok": True, "code": code, "stdout": out.getvalue(), "stderr": err.getvalue()}
