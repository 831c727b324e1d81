"""Ctrl-C: `generate` stops within seconds with the resume line and exit 130; a second Ctrl-C forces the exit;
`kill_all_workers` kills every live worker process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from kernelmosaic.store import open_store


class _SlowServer:
    """An OpenAI-compatible server that takes a minute to answer; counts requests."""

    def __enter__(self):
        server = self
        self.requests = 0

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                self.rfile.read(int(self.headers.get("content-length", 0)))
                server.requests += 1
                time.sleep(60)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.httpd.server_close()


def _wait_for(predicate, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.1)


def test_ctrl_c_stops_generate_within_seconds_and_says_how_to_resume(tmp_path):
    url = f"sqlite:///{tmp_path / 'km.db'}"
    with _SlowServer() as server:  # 80 columns, piped: the width a log or `| tee` gets
        env = {**os.environ, "KERNELMOSAIC_OPENAI_BASE_URL": f"http://127.0.0.1:{server.httpd.server_address[1]}/v1",
               "OPENAI_API_KEY": "sk-test", "COLUMNS": "80"}
        proc = subprocess.Popen([sys.executable, "-m", "kernelmosaic.cli", "generate", "--model", "openai:slow",
                                 "--device", "cpu", "--limit", "2", "--db", url, "--no-live", "--out", str(tmp_path / "runs")],
                                cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        _wait_for(lambda: server.requests >= 1, 60)
        started = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        took = time.monotonic() - started
    assert proc.returncode == 130, out + err
    assert took < 3.0, f"Ctrl-C took {took:.1f} s (the README promises 3 s)"
    assert "interrupted" in err and "generate --resume 1" in err
    # the hint names the store the run is in, on one line even piped (a wrap inside it broke copy and grep)
    assert any(f"generate --resume 1 --db {url}` continues it" in line for line in err.splitlines()), err
    with open_store(url) as store:
        run = store.latest_run()
        assert run.status == "interrupted", "`runs` shows an interrupted run as such"
        assert all(e.status == "running" for e in store.list_episodes(run.id))  # each resumes where it stopped
        store.reopen_run(run.id)  # what --resume does first
        assert store.get_run(run.id).status == "running"


def test_a_second_ctrl_c_forces_the_exit(tmp_path):
    script = textwrap.dedent("""
        import asyncio, sys, time
        from kernelmosaic.agent.interrupt import run_interruptibly

        async def stuck():
            print("ready", flush=True)  # the handlers are in place once the work runs
            await asyncio.to_thread(time.sleep, 60)  # a blocked call the first Ctrl-C cannot end

        asyncio.run(run_interruptibly(stuck(), on_interrupt=lambda: print("first", flush=True),
                                      on_force=lambda: print("forced", flush=True)))
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    proc.send_signal(signal.SIGINT)
    assert proc.stdout.readline().strip() == "first"
    started = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=10)
    assert proc.returncode == 130 and "forced" in out and time.monotonic() - started < 5


def test_kill_all_workers_kills_every_live_worker(tmp_path):
    from kernelmosaic.verify.pool import Worker, WorkerLimits, kill_all_workers

    worker = Worker("reference", "cpu", WorkerLimits(), scratch_root=tmp_path)
    worker.start()
    assert kill_all_workers() >= 1 and not worker.alive


def test_ctrl_c_stops_the_loop_in_its_stage_and_says_so(tmp_path):
    """Ctrl-C reaches the loop and its running stage (one process group): the stage stops, and the loop says which
    stage it was and how to run it again, exit 130."""
    url = f"sqlite:///{tmp_path / 'km.db'}"
    with _SlowServer() as server:
        env = {**os.environ, "KERNELMOSAIC_OPENAI_BASE_URL": f"http://127.0.0.1:{server.httpd.server_address[1]}/v1",
               "OPENAI_API_KEY": "sk-test", "COLUMNS": "200"}
        proc = subprocess.Popen([sys.executable, "-m", "kernelmosaic.cli", "loop", "--model", "openai:slow",
                                 "--device", "cpu", "--db", url, "--out", str(tmp_path / "loop")],
                                cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        _wait_for(lambda: server.requests >= 1, 120)  # in stage 2, generate, waiting on the model
        started = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole foreground group
        out, err = proc.communicate(timeout=30)
        seconds = time.monotonic() - started
    assert proc.returncode == 130, (out[-2000:], err[-2000:])
    assert "interrupted during 2/6 generate" in " ".join(err.split()), err[-2000:]
    assert "kernelmosaic loop" in err and "generate --resume" in " ".join((out + err).split()), err[-2000:]
    assert seconds < 10, seconds
