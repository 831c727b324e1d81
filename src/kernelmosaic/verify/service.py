"""The warm path: one long-lived verifier per machine behind a Unix socket, used by `verify` and `verify-batch`.

`kernelmosaic verify-serve` keeps Verifiers (reference workers with problems set up, a warm spare candidate worker
per device, the `torch.compile` baselines) alive between invocations, so a repeated verify of a built candidate
skips starting workers and setting the problem up. Requests and replies are JSON lines; a verdict is the same JSON
as `verify --json`.

Who it speaks to: the socket lives in the user's runtime folder (`paths.socket_path`: 0700, never the build cache or
a scratch folder a candidate writes into); client and service check that folder and the socket are this user's
alone, and the service answers a connection only when the kernel-reported peer is its owner and no worker's process
(`verify/peer.py`). Refusals are `ServiceDeclined`, and the client then judges in its own process.

What it judges with: the client's settings, except that checks weaker than the service's own settings are refused,
the service keeps its own build cache, workers, limits and timeouts (`verify/strength.py`), and every verdict
records what differed. One Verifier per distinct settings, the base seed drawn once per Verifier unless the client
sets one, as a long-lived in-process Verifier does; one in use by a request is never closed for another.
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
from contextlib import contextmanager
from pathlib import Path

from kernelmosaic.paths import service_dir, socket_path
from kernelmosaic.verify.config import VerifyConfig
from kernelmosaic.verify.requests import Alternative, InputError
from kernelmosaic.verify.service_client import connect
from kernelmosaic.verify.service_errors import (
    ServiceDeclined,
    ServiceUnavailable,
    ServiceUntrusted,
)

__all__ = ["serve"]

log = logging.getLogger(__name__)
_KEEP = 4
"""Verifiers (distinct settings) kept warm at once; the least recently used is closed."""


def _key(config: dict, seeded: bool) -> str:
    return json.dumps({k: v for k, v in config.items() if seeded or k != "seed"}, sort_keys=True)


class _Handler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        from kernelmosaic.verify.peer import peer_refusal
        from kernelmosaic.verify.pool import live_worker_pids

        refusal = peer_refusal(self.connection, live_worker_pids())
        if refusal:  # before reading a byte of the request
            log.warning("connection refused: %s", refusal)
            self._send({"ok": False, "kind": "declined", "error": f"{refusal}; this service answers only its "
                        "owner's own processes, never a worker's"})
            return
        try:
            request = json.loads(self.rfile.readline())
            if request["op"] == "device":  # what the service's torch sees, so a client need not import torch
                from kernelmosaic.verify.settings import default_device

                self._send({"ok": True, "device": default_device()})
                return
            if request["op"] == "cli_verify":  # a thin client's whole command (kernelmosaic.launch)
                from kernelmosaic.verify.forwarded import run_verify

                self._send(run_verify(list(request["argv"]), Path(request["cwd"]), self.server.settings.cache_dir))  # type: ignore[attr-defined]
                return
            options = {k: request[k] for k in ("timing", "sanitize", "policy", "timing_profile") if request.get(k) is not None}
            with self.server.verifier_for(request["config"], bool(request.get("seeded")), options) as (verifier, kept):  # type: ignore[attr-defined]
                self._judge(request, verifier, kept, options)
        except ServiceDeclined as exc:
            log.info("request declined: %s", exc)
            self._send({"ok": False, "kind": "declined", "error": str(exc)})
        except Exception as exc:  # noqa: BLE001 - reported to the client, which decides the exit status
            log.warning("request failed: %s", exc)
            self._send({"ok": False, "kind": "input" if isinstance(exc, InputError) else "verifier", "error": str(exc)})

    def _judge(self, request: dict, verifier, kept: list[str], options: dict) -> None:
        if request["op"] == "verify":
            alts = [Alternative(label=a["label"], problem=Path(a["problem"])) for a in request.get("alternatives", [])]
            verdict = verifier.verify(Path(request["problem"]), Path(request["candidate"]), alternatives=alts, **options)
            verdict.settings.service_kept = kept
            self._send({"ok": True, "verdict": verdict.to_dict()})
        else:
            pairs = [(Path(p), Path(c)) for p, c in request["pairs"]]
            for i, verdict in verifier.verify_many(pairs, **options):
                verdict.settings.service_kept = kept
                self._send({"ok": True, "index": i, "verdict": verdict.to_dict()})
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

    def __init__(self, path: Path, devices: list[str] | None, settings: VerifyConfig) -> None:
        super().__init__(str(path), _Handler)
        self.devices = devices
        self.settings = settings
        self._verifiers: OrderedDict[str, object] = OrderedDict()
        self._in_use: dict[str, int] = {}
        self._lock = threading.Lock()

    def _judged_with(self, config: dict, seeded: bool, options: dict) -> tuple[VerifyConfig, list[str]]:
        """The settings this service judges a request with, and the service-owned names it replaced; raises
        ServiceDeclined for another build cache or checks weaker than the service's own."""
        from kernelmosaic.verify.strength import service_view, weaker

        values = config if seeded else {k: v for k, v in config.items() if k != "seed"}
        asked = VerifyConfig.model_validate(values)
        if Path(asked.cache_dir).resolve() != Path(self.settings.cache_dir).resolve():
            raise ServiceDeclined(f"this service builds in {self.settings.cache_dir}, not {asked.cache_dir}")
        judged, kept = service_view(asked, self.settings)
        per_call = {k: options[k] for k in ("timing", "sanitize") if k in options}
        weak = weaker(judged.model_copy(update=per_call), self.settings)
        if weak:
            raise ServiceDeclined("the service judges only with checks at least as strong as its own settings: "
                                  + "; ".join(weak.values()) + " (judged in this process instead; the verdict "
                                  "records the weakened settings and is never verified)")
        return judged, kept

    @contextmanager
    def verifier_for(self, config: dict, seeded: bool, options: dict) -> Iterator[tuple[object, list[str]]]:
        from kernelmosaic.verify.verifier import Verifier

        judged, kept = self._judged_with(config, seeded, options)
        key = _key(judged.model_dump(mode="json"), seeded)
        with self._lock:
            if key not in self._verifiers:
                verifier = Verifier(judged, self.devices)
                verifier.served_by = f"service pid {os.getpid()}"
                self._verifiers[key] = verifier
            self._verifiers.move_to_end(key)
            self._in_use[key] = self._in_use.get(key, 0) + 1
            verifier = self._verifiers[key]
            idle = [k for k in self._verifiers if not self._in_use.get(k)]
            closing = [self._verifiers.pop(k) for k in idle[:max(0, len(self._verifiers) - _KEEP)]]
        for old in closing:  # the least recently used idle ones: a verifier a request is using stays open
            old.close()
        try:
            yield verifier, kept
        finally:
            with self._lock:
                self._in_use[key] -= 1

    def close_all(self) -> None:
        with self._lock:
            for verifier in self._verifiers.values():
                verifier.close()
            self._verifiers.clear()


def serve(cache_dir: Path, devices: list[str] | None = None, ready: threading.Event | None = None,
          stop: threading.Event | None = None, settings: VerifyConfig | None = None) -> None:
    """Serve until `stop` is set (or the process is interrupted); one service per cache directory. `settings`: the
    service's own (default: VerifyConfig's defaults), the floor of the checks it judges with. Raises RuntimeError
    when its runtime folder is not this user's alone or another service answers there."""
    settings = (settings or VerifyConfig(cache_dir=cache_dir)).model_copy(update={"cache_dir": Path(cache_dir)})
    try:
        service_dir()
    except PermissionError as exc:
        raise RuntimeError(str(exc)) from None
    path = socket_path(cache_dir)
    try:
        connect(path).close()
        raise RuntimeError(f"a verifier service already answers on {path}")
    except ServiceUntrusted as exc:
        raise RuntimeError(f"not serving: {exc}") from None
    except ServiceUnavailable:
        path.unlink(missing_ok=True)  # a socket left by a service that died
    old_umask = os.umask(0o177)
    try:
        server = _Server(path, devices, settings)
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
