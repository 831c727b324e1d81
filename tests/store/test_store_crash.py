"""A writer killed with SIGKILL loses no event it reported committed, and its episode resumes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

import kernelmosaic
from kernelmosaic.contracts.messages import Message
from kernelmosaic.contracts.trajectory import MessageEvent
from kernelmosaic.store import open_store

WRITER = Path(__file__).with_name("crash_writer.py")
REPORTED = 25


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX signals")
def test_sigkill_mid_run_loses_no_committed_event(db_url: str) -> None:
    with open_store(db_url) as store:
        run_id = store.create_run("crash", "fake", "seed", {})
    src = str(Path(kernelmosaic.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    child = subprocess.Popen(
        [sys.executable, str(WRITER), db_url, str(run_id), "t"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env=env,
    )  # fmt: skip
    reported: list[int] = []
    try:
        while len(reported) < REPORTED:
            line = child.stdout.readline()
            assert line, f"writer exited early: {child.stderr.read()}"
            reported.append(int(line))
        child.send_signal(signal.SIGKILL)  # while it is busy appending the next events
    finally:
        child.kill()
        child.wait(timeout=30)
        child.stdout.close()
        child.stderr.close()
    assert child.returncode == -signal.SIGKILL
    assert reported == list(range(REPORTED))

    engine = create_engine(db_url)
    with engine.connect() as connection:
        if engine.dialect.name == "sqlite":
            assert connection.execute(text("PRAGMA integrity_check")).scalar() == "ok"
        seqs = [row[0] for row in connection.execute(text("SELECT seq FROM events ORDER BY seq"))]
    engine.dispose()
    assert seqs == list(range(len(seqs))), "no duplicates and no holes"
    assert set(reported) <= set(seqs), "every event reported committed survived the kill"

    with open_store(db_url) as store:
        resumed = store.start_episode(run_id, "t")
        assert resumed.next_seq == len(seqs) and len(resumed.events) == len(seqs)
        assert [event.step for event in resumed.events] == seqs
        event = MessageEvent(step=resumed.next_seq, message=Message(role="user", content="after the crash"))
        assert store.append_event(resumed.id, resumed.next_seq, event) is True
        assert store.load_trajectory(resumed.id).events[-1] == event
