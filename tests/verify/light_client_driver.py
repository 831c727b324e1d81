"""Runs `kernelmosaic verify` in this process against a stand-in verifier service, then reports what it imported.

Usage: python light_client_driver.py CACHE_DIR PROBLEM CANDIDATE [MODE]. The stand-in answers the service protocol (JSON
lines on the cache's socket, `paths.socket_path`) with the stdlib only, so any heavy module found afterwards was imported by the client.
Prints one JSON object: the exit status, the verdict the client printed, the service requests it saw, heavy modules.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import socketserver
import sys
import threading
from pathlib import Path

from kernelmosaic.paths import service_dir, socket_path

HEAVY = ("torch", "numpy", "triton", "tree_sitter", "sqlalchemy", "matplotlib", "kernelmosaic.verify.verifier",
         "kernelmosaic.verify.slot", "kernelmosaic.verify.compile_stage", "kernelmosaic.agent", "kernelmosaic.store", "kernelmosaic.evaluate")
SEEN: list[dict] = []


MODE = sys.argv[4] if len(sys.argv) > 4 else "answer"
"""`answer`: a verdict for every request; `vanish`: the service stops mid-request (it reads a verify and closes the
connection without a reply); `vanish-batch`: it answers a batch's first pair, then stops."""


class _StandIn(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        request = json.loads(self.rfile.readline())
        SEEN.append({"op": request["op"], "device": (request.get("config") or {}).get("device")})
        if request["op"] == "device":
            reply = {"ok": True, "device": "cpu"}
        elif MODE == "vanish":
            return
        elif request["op"] == "verify_many":
            verdict = {"accepted": False, "status": "static_reject", "message": "judged by the service"}
            self.wfile.write((json.dumps({"ok": True, "index": 0, "verdict": verdict}) + "\n").encode())
            return
        else:
            verdict = {"accepted": False, "status": "static_reject", "message": f"judged {Path(request['candidate']).name}"}
            reply = {"ok": True, "verdict": verdict}
        self.wfile.write((json.dumps(reply) + "\n").encode())


def main() -> None:
    cache, problem, candidate = sys.argv[1:4]  # vanish-batch: PROBLEM is a folder of pairs, CANDIDATE the --out file
    service_dir()
    path = socket_path(Path(cache))
    path.unlink(missing_ok=True)
    old = os.umask(0o177)  # 0600, as the service makes it: the client connects only to a socket that is its user's alone
    server = socketserver.ThreadingUnixStreamServer(str(path), _StandIn)
    os.umask(old)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    from kernelmosaic.cli import app

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            if MODE == "vanish-batch":
                app(["verify-batch", problem, "--out", candidate, "--device", "cpu", "--no-timing"])
            else:
                app(["verify", problem, candidate, "--json", "--no-timing"])
            code = 0
        except SystemExit as exc:
            code = exc.code
    server.shutdown()
    path.unlink(missing_ok=True)
    print(json.dumps({"exit": code, "stdout": out.getvalue(), "requests": SEEN,
                      "heavy": [m for m in HEAVY if m in sys.modules]}))


if __name__ == "__main__":
    main()
