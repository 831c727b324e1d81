#!/usr/bin/env python3
"""Worker messages of large tensors: the Channel's framing against the framing it replaced, side by side in one run.

The seventh session's framing copied the serialized message three more times (`getvalue()`, the header concatenated
in front, `bytes()` of the received buffer); the eighth session's decoded in place but still wrote and checked zip
CRC32s; the Channel writes none. Each row moves one message of COUNT float32 tensors of 2^24 elements
(64 MB each) over a socket pair, sender in a thread; the median of REPEATS round trips.

    python scripts/bench/bench_channel.py [--count 8] [--repeats 5]
"""

from __future__ import annotations

import argparse
import io
import socket
import statistics
import struct
import threading
import time

import torch

from kernelmosaic.verify.sandbox.kmworker.protocol import Channel

_HEADER = struct.Struct("!Q")


class CopyingChannel(Channel):
    """The framing before 2026-12-01 (eighth session), kept here as a baseline."""

    def send(self, message: dict) -> None:
        buf = io.BytesIO()
        torch.serialization.set_crc32_options(True)
        torch.save(message, buf)
        data = buf.getvalue()
        self.sock.sendall(_HEADER.pack(len(data)) + data)

    def recv(self) -> dict:
        (size,) = _HEADER.unpack(bytes(self._read_exact(_HEADER.size)))
        return torch.load(io.BytesIO(bytes(self._read_exact(size))), weights_only=True, map_location="cpu")


class CrcChannel(Channel):
    """The eighth session's framing: in place, with torch.save's default CRC32 on every record (checked on load)."""

    def send(self, message: dict) -> None:
        buf = io.BytesIO()
        torch.serialization.set_crc32_options(True)
        torch.save(message, buf)
        with buf.getbuffer() as view:
            self.sock.sendall(_HEADER.pack(len(view)))
            self.sock.sendall(view)


def round_trip(kind: type[Channel], message: dict) -> float:
    a, b = socket.socketpair()
    sender, receiver = kind(a), kind(b)
    started = time.perf_counter()
    thread = threading.Thread(target=sender.send, args=(message,))
    thread.start()
    got = receiver.recv()
    thread.join()
    took = time.perf_counter() - started
    assert all(torch.equal(x, y) for x, y in zip(got["tensors"], message["tensors"], strict=True))
    a.close()
    b.close()
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    message = {"tensors": [torch.randn(1 << 24) for _ in range(args.count)]}
    mb = args.count * 64
    print(f"| framing | message MB | median s (of {args.repeats}) | GB/s |\n|---|---|---|---|")
    kinds = (("copying, CRC32 (seventh session)", CopyingChannel), ("in place, CRC32 (eighth session)", CrcChannel),
             ("Channel: in place, no CRC32", Channel))
    for name, kind in kinds:
        times = []
        for _ in range(args.repeats):  # alternating kinds would be fairer on a busy host; each runs back to back here
            times.append(round_trip(kind, message))
        med = statistics.median(times)
        print(f"| {name} | {mb} | {med:.3f} | {mb / 1024 / med:.2f} |")
    print(f"\n| encode alone (torch.save) | message MB | median s (of {args.repeats}) |\n|---|---|---|")
    for crc in (True, False):
        torch.serialization.set_crc32_options(crc)
        times = []
        for _ in range(args.repeats):
            started = time.perf_counter()
            torch.save(message, io.BytesIO())
            times.append(time.perf_counter() - started)
        print(f"| {'with' if crc else 'without'} CRC32s | {mb} | {statistics.median(times):.3f} |")

if __name__ == "__main__":
    main()
