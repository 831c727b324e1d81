"""The GOT watch's poller (`verify/got_watch.py`) against a real process that rewrites its own clock slot for a few
milliseconds at a time and puts it back, as a candidate does around each timed call. The slots that decide timing
and the reply (`_HOT`) are read every few milliseconds, so even brief rewrites are seen; a process left alone gives
no finding."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from kernelmosaic.verify.got_watch import GotPoller, got_snapshot

# The child flips the slot it is given to the value of another slot of the same signature (clock_getres) for about
# 3 ms of busy work, then puts it back and sleeps 20 ms: rewritten ~13% of the time, never when a phase ends.
CHILD = r"""
import ctypes, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
print("ready", flush=True)
slot, other, flips = (int(x) for x in sys.stdin.readline().split())
page = slot & ~4095
libc.mprotect(page, 4096, 3)  # PROT_READ | PROT_WRITE, as a candidate's native code would
good = ctypes.c_uint64.from_address(slot).value
bad = ctypes.c_uint64.from_address(other).value
for _ in range(flips):
    ctypes.c_uint64.from_address(slot).value = bad
    n = 0
    for _ in range(60_000):
        n += 1
    ctypes.c_uint64.from_address(slot).value = good
    time.sleep(0.02)
print("done", flush=True)
sys.stdin.readline()
"""


@pytest.fixture
def child():
    """The flipping process, ready for its orders, and a snapshot of it; killed after the test."""
    p = subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "ready"
        yield p, got_snapshot(p.pid)
    finally:
        p.kill()
        p.wait()


def _slots(snap) -> tuple[int, int]:
    hot = {label: addr for label, addr, _ in snap.hot}
    lib = next((label.split(" in ", 1)[1] for label in hot if label.startswith("clock_gettime in libpython")), None)
    if lib is None:
        pytest.skip("this interpreter reaches clock_gettime through no libpython GOT slot")
    return hot[f"clock_gettime in {lib}"], hot[f"clock_getres in {lib}"]


def _order(p: subprocess.Popen, slot: int, value_of: int, flips: int) -> None:
    p.stdin.write(f"{slot} {value_of} {flips}\n")
    p.stdin.flush()


def test_a_clock_slot_rewritten_for_milliseconds_at_a_time_is_seen(child):
    p, snap = child
    slot, other = _slots(snap)
    with GotPoller(snap) as poller:
        _order(p, slot, other, 400)
        deadline = time.monotonic() + 30
        while not poller.changed and time.monotonic() < deadline and p.poll() is None:
            time.sleep(0.01)
    assert poller.changed and "clock_gettime" in poller.changed[0], (poller.changed, poller.hot_polls)


def test_a_process_that_rewrites_nothing_gives_no_finding(child):
    p, snap = child
    slot, _ = _slots(snap)
    with GotPoller(snap) as poller:
        _order(p, slot, slot, 20)  # "rewritten" with its own value: nothing changes
        assert p.stdout.readline().strip() == "done"
    assert poller.changed == [] and poller.hot_polls > 10
    # over the same half second or more the few hot slots were read more often than the whole tables (the test above
    # cannot say: on a loaded machine its first poll, of both, already saw the rewrite)
    assert poller.hot_polls > poller.polls, (poller.hot_polls, poller.polls)
