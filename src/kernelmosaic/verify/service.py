"""The warm path: one long-lived verifier per machine behind a Unix socket, used by `verify` and `verify-batch`.

`kernelmosaic verify-serve` keeps Verifiers (reference workers with problems set up, a warm spare candidate worker
per device, the `torch.compile` baselines) alive between invocations, so a repeated verify of a built candidate
skips starting workers and setting the problem up. The socket lives in the build cache (`verify.sock`, mode 0600):
only the user who owns the cache talks to it. Requests and replies are JSON lines; a verdict is the same JSON as
`verify --json`. The service judges with the client's settings (one Verifier per distinct settings, the base seed
drawn once per Verifier unless the client sets one, as a long-lived in-process Verifier does).
"""

from __future__ import annotations

import json
import logging
import os
import socket
import socketserver
import threading
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path

from kernelmosaic.paths import socket_path
from kernelmosaic.verify.config import VerifyConfig
from kernelmosaic.verify.requests import Alternative, InputError
from kernelmosaic.verify.verdict import Verdict

__all__ = ["socket_path", "serve", "service_available", "service_device", "ServiceUnavailable", "ServiceError",
           "remote_verify", "remote_verify_many"]

log = logging.getLogger(__name__)
_KEEP = 4
"""Verifiers (distinct settings) kept warm at once; the least recently used is closed."""


class ServiceUnavailable(Exception):
    """No service answers on the socket: the caller judges in-process."""


class ServiceError(Exception):
    """The service answered with an error; `kind` is `input` (an unusable input file) or `verifier`."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def _key(config: dict, seeded: bool) -> str:
    return json.dumps({k: v for k, v in config.items() if seeded or k != "seed"}, sort_keys=True)


class _Handler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        try:
            request = json.loads(self.rfile.readline())
            if request["op"] == "device":  # what the service's torch sees, so a client need not import torch
                from kernelmosaic.verify.settings import default_device

                self._send({"ok": True, "device": default_device()})
                return
            if request["op"] == "cli_verify":  # a thin client's whole command (kernelmosaic.launch)
                from kernelmosaic.verify.forwarded import run_verify

                self._send(run_verify(list(request["argv"]), Path(request["cwd"]), self.server.cache_dir))  # type: ignore[attr-defined]
                return
            verifier = self.server.verifier_for(request["config"], bool(request.get("seeded")))  # type: ignore[attr-defined]
            options = {k: request[k] for k in ("timing", "sanitize", "policy", "timing_profile") if request.get(k) is not None}
            if request["op"] == "verify":
                alts = [Alternative(label=a["label"], problem=Path(a["problem"])) for a in request.get("alternatives", [])]
                verdict = verifier.verify(Path(request["problem"]), Path(request["candidate"]), alternatives=alts, **options)
                self._send({"ok": True, "verdict": verdict.to_dict()})
            else:
                pairs = [(Path(p), Path(c)) for p, c in request["pairs"]]
                for i, verdict in verifier.verify_many(pairs, **options):
                    self._send({"ok": True, "index": i, "verdict": verdict.to_dict()})
        except Exception as exc:  # noqa: BLE001 - reported to the client, which decides the exit status
            log.warning("request failed: %s", exc)
            self._send({"ok": False, "kind": "input" if isinstance(exc, InputError) else "verifier", "error": str(exc)})
            return
        self.connection.shutdown(socket.SHUT_WR)  # the client has every reply and the end of the stream...
        try:
            verifier.ready_spares()  # ...before the next request's worker is brought up, while the service is idle
        except Exception as exc:  # noqa: BLE001 - a spare that cannot come up is replaced at the next hand-out
            log.warning("bringing a spare worker up ahead: %s", exc)

    def _send(self, message: dict) -> None:
        self.wfile.write((json.dumps(message) + "\n").encode())
        self.wfile.flush()


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def __init__(self, path: Path, devices: list[str] | None) -> None:
        super().__init__(str(path), _Handler)
        self.devices = devices
        self.cache_dir = path.parent
        self._verifiers: OrderedDict[str, object] = OrderedDict()
        self._lock = threading.Lock()

    def verifier_for(self, config: dict, seeded: bool):
        from kernelmosaic.verify.verifier import Verifier

        key = _key(config, seeded)
        with self._lock:
            if key not in self._verifiers:
                values = config if seeded else {k: v for k, v in config.items() if k != "seed"}
                verifier = Verifier(VerifyConfig.model_validate(values), self.devices)
                verifier.served_by = f"service pid {os.getpid()}"
                self._verifiers[key] = verifier
                while len(self._verifiers) > _KEEP:
                    self._verifiers.popitem(last=False)[1].close()
            self._verifiers.move_to_end(key)
            return self._verifiers[key]

    def close_all(self) -> None:
        with self._lock:
            for verifier in self._verifiers.values():
                verifier.close()
            self._verifiers.clear()


def serve(cache_dir: Path, devices: list[str] | None = None, ready: threading.Event | None = None,
          stop: threading.Event | None = None) -> None:
    """Serve until `stop` is set (or the process is interrupted); one service per cache directory."""
    path = socket_path(cache_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        _connect(path).close()
        raise RuntimeError(f"a verifier service already answers on {path}")
    except ServiceUnavailable:
        path.unlink(missing_ok=True)  # a socket left by a service that died
    old_umask = os.umask(0o177)
    try:
        server = _Server(path, devices)
    finally:
        os.umask(old_umask)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True)
    thread.start()
    log.info("verifier service on %s", path)
    if ready is not None:
        ready.set()
    try:
        (stop or threading.Event()).wait()
    finally:
        server.shutdown()
        server.server_close()
        server.close_all()
        path.unlink(missing_ok=True)


def _connect(path: Path) -> socket.socket:
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
        _connect(socket_path(cache_dir)).close()
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
    sock = _connect(socket_path(config.cache_dir if config is not None else cache_dir))
    if config is not None:
        request = {**request, "config": config.model_dump(mode="json"), "seeded": seeded}
    with sock, sock.makefile("rwb") as stream:
        stream.write((json.dumps(request) + "\n").encode())
        stream.flush()
        for line in stream:
            reply = json.loads(line)
            if not reply["ok"]:
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
    raise ServiceError("verifier", "the service closed the connection without a verdict")


def remote_verify_many(config: VerifyConfig, pairs: list[tuple[Path, Path]], *, seeded: bool = False,
                       **options) -> Iterator[tuple[int, Verdict]]:
    """(index, verdict) from the local service as each is decided (its lookahead); `ServiceUnavailable` when none."""
    request = {"op": "verify_many", "pairs": [[str(Path(p).resolve()), str(Path(c).resolve())] for p, c in pairs],
               **options}
    for reply in _exchange(config, request, seeded):
        yield reply["index"], Verdict.model_validate(reply["verdict"])
