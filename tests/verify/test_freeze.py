"""freeze.held_still on real processes: a process whose threads spin and count, and a subreaper (as every worker is)
whose double-forked grandchild left its session (setsid, as a candidate's native code can) and spins; inside the
block no counter advances, after it every one does."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from kernelmosaic.verify.freeze import held_still

SPINNER = r'''
import os, sys, threading

def spin(path):
    n = 0
    while True:
        n += 1
        if n % 20000 == 0:
            with open(path + ".tmp", "w") as f:
                f.write(str(n))
            os.replace(path + ".tmp", path)  # whole numbers only, for the reader

threading.Thread(target=spin, args=(sys.argv[1] + ".thread",), daemon=True).start()  # a thread of its own
spin(sys.argv[1] + ".worker")
'''


def _count(path: Path) -> int:
    try:
        return int(path.read_text() or 0)
    except (OSError, ValueError):
        return -1


def _wait_for(*paths: Path) -> None:
    deadline = time.monotonic() + 20
    while any(_count(p) <= 0 for p in paths) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert all(_count(p) > 0 for p in paths), "the spinners never started"


def test_every_thread_stops_inside_the_block_and_runs_after(tmp_path):
    base = tmp_path / "count"
    proc = subprocess.Popen([sys.executable, "-c", SPINNER, str(base)], start_new_session=True)
    counters = [Path(f"{base}.worker"), Path(f"{base}.thread")]
    try:
        _wait_for(*counters)
        with held_still(proc.pid) as held:
            assert held.processes == 1 and held.others == [] and held.settled
            assert Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in ("T", "t")
            before = [_count(p) for p in counters]
            time.sleep(0.3)
            assert [_count(p) for p in counters] == before  # neither thread wrote once while held
        time.sleep(0.3)
        assert all(_count(p) > b for p, b in zip(counters, before, strict=True))  # both continued
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _grandchildren_of_init(marker: str) -> list[int]:
    found = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if marker in (d / "cmdline").read_text():
                    found.append(int(d.name))
            except OSError:
                continue
    return found


SUBREAPER_TREE = r'''
import ctypes, os, sys, time
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER, as kmworker/confine.py sets it
counter = sys.argv[1]

def spin(path):
    n = 0
    while True:
        n += 1
        if n % 20000 == 0:
            with open(path + ".tmp", "w") as f:
                f.write(str(n))
            os.replace(path + ".tmp", path)  # whole numbers only, for the reader

if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        spin(counter + ".grandchild")
    os._exit(0)
while True:
    try:
        os.waitpid(-1, 0)  # reaps the middle child; the grandchild stays below this process
    except ChildProcessError:
        time.sleep(0.01)
'''


def test_a_double_forked_process_below_a_subreaper_is_stopped_too(tmp_path):
    base = tmp_path / "count"
    proc = subprocess.Popen([sys.executable, "-c", SUBREAPER_TREE, str(base)], start_new_session=True)
    grandchild = Path(f"{base}.grandchild")
    try:
        _wait_for(grandchild)
        with held_still(proc.pid) as held:
            assert held.settled and len(held.others) == 1  # the setsid'd grandchild, found below the subreaper
            before = _count(grandchild)
            time.sleep(0.3)
            assert _count(grandchild) == before
        time.sleep(0.3)
        assert _count(grandchild) > before
    finally:
        for p in _grandchildren_of_init(str(base)):
            os.kill(p, signal.SIGKILL)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def test_no_process_no_stop():
    with held_still(0) as held:
        assert held.processes == 0 and held.others == []
