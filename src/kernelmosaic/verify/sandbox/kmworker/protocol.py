"""Framing between parent and worker: length-prefixed `torch.save` payloads on a dedicated socket.

A message crosses with the socket's own two copies and no others: the sender writes the serialized buffer's view
(no `getvalue()` copy, no header concatenation), and the receiver decodes straight from the buffer it received into
(`_View`, no `bytes()` copy). Trials of a 16M-element task move gigabytes per judgement. Messages are written
without zip CRC32s: computing them costs the sender time (`torch.save` of 512 MB: 0.489 s with them, 0.418 s without,
docs/benchmarks.md), and a checksum guards nothing on a local socket (a hostile worker could compute a valid one).

A message may carry file descriptors (SCM_RIGHTS, at most `MAX_FDS`, attached to its header): large tensors move
between the workers as sealed memfds (`kmworker/shared.py`) that the parent relays without reading them.

The parent decodes worker messages with `torch.load(weights_only=True)`, which refuses arbitrary objects, so a
candidate that takes over its worker still cannot run code in the parent through a crafted pickle.
"""

from __future__ import annotations

import contextlib
import io
import os
import socket
import struct
import threading
from collections.abc import Iterator

import torch

__all__ = ["Channel", "MAX_FDS", "MAX_MESSAGE_BYTES"]

MAX_MESSAGE_BYTES = 8 << 30
"""The largest message either side decodes. Outputs of large-output problems never cross whole (`kmworker/shared.py`);
a message above it is refused before it is read."""
MAX_FDS = 64
"""Descriptors one message may carry; the kernel closes any beyond it (the receive buffer has room for no more)."""
_HEADER = struct.Struct("!Q")


_CRC_LOCK = threading.Lock()
_crc_users = 0
_crc_before = True


@contextlib.contextmanager
def _without_crc32() -> Iterator[None]:
    """`torch.save` without per-record CRC32s inside the block. The setting is process-wide: the first of several
    concurrent senders (the parent's judges are threads) turns it off and the last one out restores what it was."""
    global _crc_users, _crc_before
    with _CRC_LOCK:
        if _crc_users == 0:
            _crc_before = torch.serialization.get_crc32_options()
            torch.serialization.set_crc32_options(False)
        _crc_users += 1
    try:
        yield
    finally:
        with _CRC_LOCK:
            _crc_users -= 1
            if _crc_users == 0:
                torch.serialization.set_crc32_options(_crc_before)


class Channel:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self._fds_out: list[int] = []
        self._fds_in: list[int] = []

    def attach(self, fds: list[int]) -> None:
        """Descriptors for the next `send` to carry; the sender keeps (and closes) its own copies."""
        if len(fds) > MAX_FDS:
            raise ValueError(f"{len(fds)} descriptors in one message (at most {MAX_FDS})")
        self._fds_out = list(fds)

    def take_fds(self) -> list[int]:
        """The descriptors that came with the last message received; the caller owns them now (and closes them).
        Those nobody takes are closed when the next message is received."""
        fds, self._fds_in = self._fds_in, []
        return fds

    def send(self, message: dict) -> None:
        buf = io.BytesIO()
        with _without_crc32():
            torch.save(message, buf)
        fds, self._fds_out = self._fds_out, []
        with buf.getbuffer() as view:
            if len(view) > MAX_MESSAGE_BYTES:  # refused here, with its size, before the peer reads a byte of it
                raise ValueError(f"a message of {_gib(len(view))} exceeds the {_gib(MAX_MESSAGE_BYTES)} limit on "
                                 "what crosses a worker's socket")
            header = _HEADER.pack(len(view))
            if fds:
                sent = socket.send_fds(self.sock, [header], fds)
                self.sock.sendall(header[sent:])
            else:
                self.sock.sendall(header)
            self.sock.sendall(view)

    def recv(self) -> dict:
        _close(self.take_fds())
        (size,) = _HEADER.unpack(self._read_header())
        if size > MAX_MESSAGE_BYTES:
            raise ValueError(f"a message of {_gib(size)} exceeds the {_gib(MAX_MESSAGE_BYTES)} limit on what crosses "
                             "a worker's socket")
        data = self._read_exact(size)
        obj = torch.load(_View(data), weights_only=True, map_location="cpu")
        if not isinstance(obj, dict):
            raise ValueError("malformed message: not a dict")
        return obj

    def _read_header(self) -> bytes:
        """The length prefix, with the descriptors that came with it (kept for `take_fds`)."""
        got = b""
        while len(got) < _HEADER.size:
            data, fds, _, _ = socket.recv_fds(self.sock, _HEADER.size - len(got), MAX_FDS)
            self._fds_in += fds
            if not data:
                raise EOFError("peer closed the channel")
            got += data
        return got

    def _read_exact(self, n: int) -> bytearray:
        view = bytearray(n)
        got = 0
        while got < n:
            chunk = self.sock.recv_into(memoryview(view)[got:], min(n - got, 1 << 24))
            if chunk == 0:
                raise EOFError("peer closed the channel")
            got += chunk
        return view

    def poll(self, timeout: float | None) -> bool:
        import select

        ready, _, _ = select.select([self.sock], [], [], timeout)
        return bool(ready)

    def close(self) -> None:
        _close(self.take_fds() + self._fds_out)
        self._fds_out = []
        try:
            self.sock.close()
        except OSError:
            pass


def _gib(n: int) -> str:
    return f"{n / (1 << 30):.2f} GiB"


def _close(fds: list[int]) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


class _View(io.RawIOBase):
    """A read-only, seekable file over a received buffer, so `torch.load` reads it in place."""

    def __init__(self, data: bytearray) -> None:
        super().__init__()
        self._data = memoryview(data)
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: len(self._data)}[whence]
        self._pos = max(base + offset, 0)
        return self._pos

    def readinto(self, buffer) -> int:
        n = max(min(len(buffer), len(self._data) - self._pos), 0)
        buffer[:n] = self._data[self._pos:self._pos + n]
        self._pos += n
        return n
