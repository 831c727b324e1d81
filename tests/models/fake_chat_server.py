"""A local Chat Completions server for the OpenAI backend tests: canned responses, request log, in-flight count."""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Canned:
    """One response the server will give."""

    status: int = 200
    body: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


def completion(
    content: str | None = "",
    tool_calls: list[dict[str, Any]] | None = None,
    prompt_tokens: int = 11,
    completion_tokens: int = 7,
    finish_reason: str = "stop",
) -> str:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    return json.dumps(
        {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": 0,
            "model": "test-model",
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
    )


class FakeChatServer:
    """Answers POST /v1/chat/completions from a queue of canned responses, then with `default`."""

    def __init__(self) -> None:
        self.queue: deque[Canned] = deque()
        self.default = Canned(body=completion("hello"))
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                request = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    server.requests.append(request)
                    server.headers.append({k.lower(): v for k, v in self.headers.items()})
                    canned = server.queue.popleft() if server.queue else server.default
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    time.sleep(canned.delay_s)
                finally:
                    # done before the reply goes out: once the client has read it, it may send its next request, and
                    # that one must not find this one still counted (CI, 2026-12-02: 5 counted under a cap of 4)
                    with server._lock:
                        server.in_flight -= 1
                try:
                    payload = canned.body.encode()
                    self.send_response(canned.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(payload)))
                    for key, value in canned.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout tests)

        class Server(ThreadingHTTPServer):
            request_queue_size = 128  # the default backlog of 5 refuses bursts of concurrent clients
            daemon_threads = True

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def push(self, status: int = 200, body: str = "", headers: dict[str, str] | None = None, delay_s: float = 0.0) -> None:
        self.queue.append(Canned(status, body, headers or {}, delay_s))
