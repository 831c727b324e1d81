"""Stopping kills every worker process below the stopping process, also one whose `Worker` object was dropped while
its process ran (`pool.kill_stray_workers`, run on stop after `kill_all_workers`); other children are left alone."""

from __future__ import annotations

import subprocess
import sys
import time

from kernelmosaic.verify.pool import kill_stray_workers


def test_a_worker_process_no_worker_object_holds_is_killed_and_other_children_are_not():
    sleeper = [sys.executable, "-c", "import time; time.sleep(60)"]
    stray = subprocess.Popen([*sleeper, "kmworker"], start_new_session=True)  # a worker's command line, no Worker
    other = subprocess.Popen([*sleeper, "something-else"], start_new_session=True)
    try:
        time.sleep(0.3)
        assert kill_stray_workers() >= 1
        assert stray.wait(timeout=10) != 0
        assert other.poll() is None  # not a worker: left running
    finally:
        for proc in (stray, other):
            proc.kill()
            proc.wait()
