"""Framing between parent and worker (kmworker.protocol.Channel): messages decode from the received buffer in place,
intact, one after another on one socket; a payload that is not a plain dict of allowed types is refused."""

from __future__ import annotations

import io
import socket
import struct
import threading

import pytest
import torch

from kernelmosaic.verify.sandbox.kmworker.protocol import Channel


@pytest.fixture
def pair():
    a, b = socket.socketpair()
    yield Channel(a), Channel(b)
    a.close()
    b.close()


def _send_async(channel: Channel, message: dict) -> threading.Thread:
    thread = threading.Thread(target=channel.send, args=(message,))
    thread.start()
    return thread


def test_tensors_of_every_kind_arrive_intact_in_order(pair):
    sender, receiver = pair
    messages = [
        {"ok": True, "result": {"tensors": [torch.randn(3, 5), torch.arange(7), torch.empty(0)], "meta": [{"x": 1}]}},
        {"ok": True, "result": {"big": torch.randn(1 << 21).to(torch.float64), "half": torch.randn(9).half()}},
        {"ok": False, "error": {"type": "ValueError", "message": "é" * 1000}},
    ]
    thread = threading.Thread(target=lambda: [sender.send(m) for m in messages])
    thread.start()
    got = [receiver.recv() for _ in messages]
    thread.join()
    a, b = got[0]["result"]["tensors"], messages[0]["result"]["tensors"]
    assert all(torch.equal(x, y) and x.dtype == y.dtype for x, y in zip(a, b, strict=True))
    assert torch.equal(got[1]["result"]["big"], messages[1]["result"]["big"])
    assert got[1]["result"]["half"].dtype == torch.float16
    assert got[2] == messages[2] and got[0]["result"]["meta"] == [{"x": 1}]


def test_a_decoded_tensor_is_not_disturbed_by_the_next_message(pair):
    sender, receiver = pair
    first = torch.randn(1000)
    thread = _send_async(sender, {"t": first})
    got = receiver.recv()["t"]
    thread.join()
    thread = _send_async(sender, {"t": torch.zeros(1000)})
    receiver.recv()
    thread.join()
    assert torch.equal(got, first)


def test_a_crafted_pickle_is_refused(pair):
    sender, receiver = pair

    class Evil:
        def __reduce__(self):
            return (print, ("ran in the parent",))

    buf = io.BytesIO()
    torch.save({"x": Evil()}, buf)
    data = buf.getvalue()
    sender.sock.sendall(struct.pack("!Q", len(data)) + data)
    with pytest.raises(Exception, match="(?i)weights_only|unsupported|global"):
        receiver.recv()


def test_a_message_that_is_not_a_dict_is_refused(pair):
    sender, receiver = pair
    buf = io.BytesIO()
    torch.save([1, 2, 3], buf)
    data = buf.getvalue()
    sender.sock.sendall(struct.pack("!Q", len(data)) + data)
    with pytest.raises(ValueError, match="not a dict"):
        receiver.recv()


def test_concurrent_senders_leave_the_crc32_setting_as_they_found_it():
    """Sends write no CRC32s (the process-wide `torch.save` setting is off while any send runs); many threads sending
    at once on their own sockets must restore it, whatever order they finish in."""
    before = torch.serialization.get_crc32_options()
    pairs = [socket.socketpair() for _ in range(6)]
    senders = [_send_async(Channel(a), {"t": torch.randn(1 << 18)}) for a, _ in pairs]
    got = [Channel(b).recv()["t"] for _, b in pairs]
    for thread in senders:
        thread.join()
    assert all(t.shape == (1 << 18,) for t in got)
    assert torch.serialization.get_crc32_options() is before
    buf = io.BytesIO()
    torch.save({"t": torch.ones(3)}, buf)  # outside a send the setting applies: this record carries its CRC32
    assert torch.serialization.get_crc32_options() is before
    for a, b in pairs:
        a.close()
        b.close()


def test_a_message_written_with_crc32s_still_decodes(pair):
    """A peer that writes CRC32s (torch.save's default) is read as before."""
    sender, receiver = pair
    buf = io.BytesIO()
    torch.serialization.set_crc32_options(True)
    torch.save({"t": torch.arange(10.0)}, buf)
    data = buf.getvalue()
    sender.sock.sendall(struct.pack("!Q", len(data)) + data)
    assert torch.equal(receiver.recv()["t"], torch.arange(10.0))


def test_a_sent_message_carries_no_crc32s(pair):
    """Computing CRC32s costs `torch.save` time on large messages (docs/benchmarks.md): none are written."""
    import zipfile

    sender, receiver = pair
    thread = _send_async(sender, {"t": torch.randn(1 << 16)})
    (size,) = struct.unpack("!Q", receiver._read_exact(8))
    data = bytes(receiver._read_exact(size))
    thread.join()
    records = zipfile.ZipFile(io.BytesIO(data)).infolist()
    assert records and all(r.CRC == 0 for r in records if r.file_size > 0 and r.filename.split("/")[-2] == "data")
