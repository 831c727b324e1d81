"""Fixtures of the model backend tests."""

from __future__ import annotations

import pytest
from fake_chat_server import FakeChatServer


@pytest.fixture
def chat_server():
    server = FakeChatServer()
    server.thread.start()
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()
