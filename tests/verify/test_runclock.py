"""The kernel's account of a worker's threads (verify/runclock.py), read from /proc on real processes: a CPU-bound
thread's run + run-queue wait is its wall time however loaded the machine, a sleeping one wants no CPU, and the
parent's own wait is counted apart. Fast (no extension builds): plain Python child processes."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from kernelmosaic.verify.runclock import run_clock, snapshot

from .loaded_kit import busy_cores

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs Linux /proc schedstat")


def _child(code: str) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    assert proc.stdout.readline().strip() == b"ready"
    return proc


def _account(proc: subprocess.Popen, seconds: float):
    before = snapshot(proc.pid)
    t0 = time.perf_counter()
    time.sleep(seconds)
    wall_ms = (time.perf_counter() - t0) * 1e3
    run = run_clock(proc.pid, before, snapshot(proc.pid))
    proc.kill()
    proc.wait()
    return wall_ms, run


def test_a_busy_thread_wants_the_cpu_for_the_whole_wall_time_on_a_loaded_machine():
    with busy_cores(per_core=2):
        wall_ms, run = _account(_child("print('ready', flush=True)\nwhile True: pass"), 1.0)
    assert run is not None and run.threads == 1
    assert run.busiest_run_ms < 0.9 * wall_ms  # the load took part of the CPU from it ...
    assert run.main_wait_ms > 0.1 * wall_ms  # ... and the kernel says so
    assert 0.85 * wall_ms <= run.busiest_runnable_ms <= 1.05 * wall_ms  # run + wait: its wall time


def test_a_sleeping_worker_wants_no_cpu():
    wall_ms, run = _account(_child("import time\nprint('ready', flush=True)\ntime.sleep(60)"), 0.5)
    assert run is not None and run.busiest_runnable_ms < 0.05 * wall_ms and run.load_ms < 0.1 * wall_ms


def test_every_thread_is_seen_and_the_busiest_counts():
    code = ("import threading\nspin = lambda: [None for _ in iter(int, 1)]\n"
            "threading.Thread(target=spin, daemon=True).start()\nprint('ready', flush=True)\n"
            "import time\ntime.sleep(60)")
    wall_ms, run = _account(_child(code), 0.5)
    assert run.threads == 2
    assert run.busiest_runnable_ms > 0.8 * wall_ms  # the helper thread, not the sleeping main one


def test_no_account_for_a_process_that_is_gone():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    assert snapshot(proc.pid) is None and run_clock(proc.pid, None, None) is None
