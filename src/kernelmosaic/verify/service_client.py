"""The client side of the verifier service (`verify/service.py`): connect only to a socket that is this user's
alone, ask for verdicts, and read replies. `verify`, `verify-batch` and the service's own start-up check use it."""

from __future__ import annotations

import json
import logging
import socket
from collections.abc import Iterator
from pathlib import Path

from kernelmosaic.contracts.verdict import Verdict
from kernelmosaic.paths import not_private, socket_path
from kernelmosaic.verify.config import VerifyConfig
from kernelmosaic.verify.requests import Alternative, InputError
from kernelmosaic.verify.service_errors import (
    ServiceDeclined,
    ServiceError,
    ServiceGone,
    ServiceUnavailable,
    ServiceUntrusted,
)

__all__ = ["connect", "service_available", "service_device", "remote_verify", "remote_verify_many"]

log = logging.getLogger(__name__)


def connect(path: Path) -> socket.socket:
    """A connection to the socket at `path` once it and its folder are found this user's alone."""
    problem = not_private(path.parent, "folder") if path.parent.exists() else None
    problem = problem or not_private(path, "socket")
    if problem:
        log.warning("not connecting to the verifier service: %s", problem)
        raise ServiceUntrusted(f"not connecting to the verifier service: {problem}")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(path))
    except OSError as exc:
        sock.close()
        raise ServiceUnavailable(f"{path}: {exc}") from exc
    return sock


def service_available(cache_dir: Path) -> bool:
    """A service answers on the cache directory's socket."""
    try:
        connect(socket_path(cache_dir)).close()
    except ServiceUnavailable:
        return False
    return True


def service_device(cache_dir: Path) -> str | None:
    """The device the running service's torch sees (`cuda` or `cpu`); None when no service answers."""
    try:
        for reply in _exchange(None, {"op": "device"}, False, cache_dir):
            return str(reply["device"])
    except (ServiceUnavailable, ServiceError, OSError, ValueError, KeyError):
        return None
    return None


def _exchange(config: VerifyConfig | None, request: dict, seeded: bool, cache_dir: Path | None = None) -> Iterator[dict]:
    sock = connect(socket_path(config.cache_dir if config is not None else cache_dir))
    if config is not None:
        request = {**request, "config": config.model_dump(mode="json"), "seeded": seeded}
    with sock, sock.makefile("rwb") as stream:
        try:
            stream.write((json.dumps(request) + "\n").encode())
            stream.flush()
        except OSError as exc:
            raise ServiceGone(f"the verifier service stopped before it read the request ({exc})") from exc
        while True:
            try:
                line = stream.readline()
                if not line:
                    return
                reply = json.loads(line)
            except (OSError, ValueError) as exc:  # reset, or a reply cut short
                raise ServiceGone(f"the verifier service stopped mid-reply ({exc})") from exc
            if not reply["ok"]:
                if reply["kind"] == "declined":
                    raise ServiceDeclined(reply["error"])
                if reply["kind"] == "input":
                    raise InputError(reply["error"])
                raise ServiceError(reply["kind"], reply["error"])
            yield reply


def remote_verify(config: VerifyConfig, problem: Path, candidate: Path, *, seeded: bool = False,
                  alternatives: list[Alternative] = (), **options) -> Verdict:
    """One verdict from the local service; `ServiceUnavailable` when none runs."""
    request = {"op": "verify", "problem": str(Path(problem).resolve()), "candidate": str(Path(candidate).resolve()),
               "alternatives": [{"label": a.label, "problem": str(Path(a.problem).resolve())} for a in alternatives],
               **options}
    for reply in _exchange(config, request, seeded):
        return Verdict.model_validate(reply["verdict"])
    raise ServiceGone("the verifier service stopped before it answered (it closed the connection without a verdict)")


def remote_verify_many(config: VerifyConfig, pairs: list[tuple[Path, Path]], *, seeded: bool = False,
                       **options) -> Iterator[tuple[int, Verdict]]:
    """(index, verdict) from the local service as each is decided (its lookahead); `ServiceUnavailable` when none."""
    request = {"op": "verify_many", "pairs": [[str(Path(p).resolve()), str(Path(c).resolve())] for p, c in pairs],
               **options}
    done: set[int] = set()
    try:
        for reply in _exchange(config, request, seeded):
            done.add(reply["index"])
            yield reply["index"], Verdict.model_validate(reply["verdict"])
    except ServiceGone as exc:
        raise ServiceGone(f"{exc}; it answered {len(done)} of {len(pairs)} pairs", frozenset(done)) from exc
    if len(done) < len(pairs):
        raise ServiceGone(f"the verifier service stopped after answering {len(done)} of {len(pairs)} pairs",
                          frozenset(done))
