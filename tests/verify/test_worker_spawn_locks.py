"""Starting a worker runs no Python between fork and exec (verify/pool.py, `limit_args`): the worker applies its
own limits. A `preexec_fn` made the interpreter take its fork locks (logging's module lock, then the import lock);
on the H100 a compile thread that held the import lock (a first import of setuptools, whose finder imports under
it) waited for the logging lock that a spawning thread held, and every judgement of the process stopped."""

from __future__ import annotations

import _imp
import os
import sys
import threading
from pathlib import Path

import pytest

from kernelmosaic.verify.pool import Worker, WorkerLimits
from kernelmosaic.verify.sandbox.kmworker.protocol import Channel  # noqa: F401 - imported before the lock is held

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

GIB = 1 << 30


def _limits(pid: int) -> dict[str, str]:
    rows = Path(f"/proc/{pid}/limits").read_text().splitlines()[1:]
    return {row[:26].strip(): row[26:47].strip() for row in rows}


def test_a_worker_starts_while_another_thread_holds_the_import_lock_and_applies_its_limits():
    worker = Worker("reference", "cpu", WorkerLimits(address_space_bytes=48 * GIB, nice=3))
    errors: list[BaseException] = []

    def start() -> None:
        try:
            worker.spawn()  # fork and exec: the part that ran Python in the child
        except BaseException as exc:  # noqa: BLE001 - reported by the test thread
            errors.append(exc)

    thread = threading.Thread(target=start, daemon=True)
    _imp.acquire_lock()  # what a thread importing under the lock holds (a meta-path finder that imports)
    try:
        thread.start()
        thread.join(60)
        started = not thread.is_alive()
    finally:
        _imp.release_lock()
    try:
        thread.join(120)
        assert started, "the worker's start waited for the import lock another thread held"
        assert not errors, errors
        worker.activate()  # its greeting: it has applied its limits by then
        limits = _limits(worker.pid)
        assert limits["Max address space"] == str(48 * GIB), limits
        assert limits["Max core file size"] == "0", limits
        fields = Path(f"/proc/{worker.pid}/stat").read_text().rsplit(")", 1)[1].split()
        assert int(fields[16]) == os.getpriority(os.PRIO_PROCESS, 0) + 3  # nice, the 19th field of stat
    finally:
        worker.kill()
