"""A judgement waiting for the device behind another process says so, naming who holds the lock (the 2026-12-06 GPU
run sat silent for 15 minutes behind processes a killed test run left). Real processes, real flocks."""

from __future__ import annotations

import fcntl
import logging
import subprocess
import sys
import threading
import time

from kernelmosaic.verify import devlock

HOLD = """
import fcntl, sys, time
f = open(sys.argv[1], "a+")
fcntl.flock(f.fileno(), fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(float(sys.argv[2]))
"""


def test_a_long_wait_names_the_process_holding_the_device_and_ends_when_it_lets_go(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(devlock, "SAY_WAIT_S", 0.3)
    path = tmp_path / "timing.lock"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(path), "1.5"], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    try:
        with open(path, "a+") as f, caplog.at_level(logging.WARNING, logger=devlock.__name__):
            started = time.monotonic()
            devlock.acquire(f.fileno(), fcntl.LOCK_SH, "the device (test)")
            waited = time.monotonic() - started
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)
    finally:
        holder.wait(10)
    assert 1.0 < waited < 5.0, waited  # it waited for the holder, and took the lock once the holder exited
    said = [r.getMessage() for r in caplog.records]
    assert said and all(f"{holder.pid}: " in m and "the device (test)" in m for m in said), said


def test_no_wait_no_word(tmp_path, caplog):
    path = tmp_path / "timing.lock"
    with open(path, "a+") as f, caplog.at_level(logging.WARNING, logger=devlock.__name__):
        devlock.acquire(f.fileno(), fcntl.LOCK_EX, "the device (test)")
        assert devlock.holders(f.fileno())[0].startswith(f"{__import__('os').getpid()}: ")
    assert caplog.records == []


def test_shared_holders_of_two_processes_do_not_wait(tmp_path):
    path = tmp_path / "timing.lock"
    other = subprocess.Popen([sys.executable, "-c", HOLD.replace("LOCK_EX", "LOCK_SH"), str(path), "5"],
                             stdout=subprocess.PIPE, text=True)
    assert other.stdout.readline().strip() == "held"
    try:
        done = threading.Event()

        def take():
            with open(path, "a+") as f:
                devlock.acquire(f.fileno(), fcntl.LOCK_SH, "the device (test)")
                done.set()

        threading.Thread(target=take, daemon=True).start()
        assert done.wait(2.0)
    finally:
        other.kill()
        other.wait()
