"""Framing between parent and worker: length-prefixed `torch.save` payloads on a dedicated socket.

The parent decodes worker messages with `torch.load(weights_only=True)`, which refuses arbitrary objects, so a
candidate that takes over its worker still cannot run code in the parent through a crafted pickle.
"""

from __future__ import annotations

import io
import socket
import struct

import torch

__all__ = ["Channel", "MAX_MESSAGE_BYTES"]

MAX_MESSAGE_BYTES = 8 << 30
_HEADER = struct.Struct("!Q")


class Channel:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    def send(self, message: dict) -> None:
        buf = io.BytesIO()
        torch.save(message, buf)
        data = buf.getvalue()
        self.sock.sendall(_HEADER.pack(len(data)) + data)

    def recv(self) -> dict:
        (size,) = _HEADER.unpack(self._read_exact(_HEADER.size))
        if size > MAX_MESSAGE_BYTES:
            raise ValueError(f"message of {size} bytes exceeds the limit")
        data = self._read_exact(size)
        obj = torch.load(io.BytesIO(data), weights_only=True, map_location="cpu")
        if not isinstance(obj, dict):
            raise ValueError("malformed message: not a dict")
        return obj

    def _read_exact(self, n: int) -> bytes:
        view = bytearray(n)
        got = 0
        while got < n:
            chunk = self.sock.recv_into(memoryview(view)[got:], min(n - got, 1 << 24))
            if chunk == 0:
                raise EOFError("peer closed the channel")
            got += chunk
        return bytes(view)

    def poll(self, timeout: float | None) -> bool:
        import select

        ready, _, _ = select.select([self.sock], [], [], timeout)
        return bool(ready)

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass
