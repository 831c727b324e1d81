"""A local OpenAI-compatible server that plays an agent: its reply depends on how many assistant turns the
conversation already has (write a candidate, test it, submit), so any number of episodes can talk to it at once."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from agent_kit import candidate

PLAN = [("write_candidate", {"source": candidate("ms=1")}), ("test", {}), ("submit", {})]


class AgentChatServer:
    def __init__(self, delay_s: float = 0.05) -> None:
        self.delay_s = delay_s
        self.requests = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                request = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
                with server._lock:
                    server.requests += 1
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    time.sleep(server.delay_s)
                    payload = server.reply(request["messages"]).encode()
                    self.send_response(200)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                finally:
                    with server._lock:
                        server.in_flight -= 1

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def reply(self, messages: list[dict[str, Any]]) -> str:
        turn = sum(m["role"] == "assistant" for m in messages)
        name, args = PLAN[min(turn, len(PLAN) - 1)]
        call = {"id": f"call_{turn}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
        return json.dumps({"id": "cmpl", "object": "chat.completion", "created": 0, "model": "fake",
                           "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
                           "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}})
