"""`stuck.dump`: a stuck test's report names where the test process and its workers wait."""

from __future__ import annotations

import subprocess
import sys
import time

from stuck import descendants, dump

CHILD = """
import faulthandler, signal, sys, time
faulthandler.register(signal.SIGUSR2, all_threads=True)
def waiting_for_the_device():
    print("ready", flush=True)
    time.sleep(60)
waiting_for_the_device()
"""


def test_the_report_has_the_test_stack_and_each_worker_stack(tmp_path):
    log = tmp_path / "output.log"
    with open(log, "wb") as out:  # a worker's log, as verify/pool.py writes it
        child = subprocess.Popen([sys.executable, "-c", CHILD, "kmworker"], stdout=out, stderr=subprocess.STDOUT)
    try:
        for _ in range(200):
            if b"ready" in log.read_bytes():
                break
            time.sleep(0.05)
        assert child.pid in descendants(__import__("os").getpid())
        report = tmp_path / "stacks.txt"
        dump("tests/x.py::test_x", str(report))
        text = report.read_text()
    finally:
        child.kill()
        child.wait()
    assert "still running: tests/x.py::test_x" in text
    assert "test_the_report_has_the_test_stack_and_each_worker_stack" in text  # this thread's own frame
    assert f"-- worker {child.pid}'s log" in text
    assert "waiting_for_the_device" in text  # the worker's frame, written on SIGUSR2
