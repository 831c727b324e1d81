"""`kernelmosaic verify ... --json` with the verifier service running is handed to the service whole
(`kernelmosaic.launch`, `verify/forwarded.py`): the client imports nothing of the package, and it gets the full
CLI's verdict and exit status for the same command, relative paths included (messages name them absolutely)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import pytest

from kernelmosaic.launch import forward
from kernelmosaic.verify.config import VerifyConfig
from kernelmosaic.verify.forwarded import run_verify
from kernelmosaic.verify.service import serve

from .kit import PROBLEM_ADD_RELU, candidate, write

FORWARD_AND_REPORT = """
import json, sys
from kernelmosaic.launch import forward
code = forward(sys.argv[1:])
heavy = [m for m in ("typer", "click", "rich", "pydantic", "torch", "kernelmosaic.cli", "kernelmosaic.config")
         if m in sys.modules]
print(json.dumps({"code": code, "heavy": heavy}), file=sys.stderr)
"""


@pytest.fixture
def served(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("KERNELMOSAIC_CACHE", str(cache))  # the service's default cache is the one it serves
    ready, stop = threading.Event(), threading.Event()
    own = VerifyConfig(cache_dir=cache, trials=2, timing=False)  # the floor of its checks: the tests ask 2 trials
    thread = threading.Thread(target=serve, args=(cache,), kwargs={"ready": ready, "stop": stop, "settings": own},
                              daemon=True)
    thread.start()
    assert ready.wait(30)
    yield cache
    stop.set()
    thread.join(60)


@pytest.mark.slow
def test_a_forwarded_verify_prints_what_the_full_cli_prints(tmp_path, served):
    write(tmp_path, "problem.py", PROBLEM_ADD_RELU)
    write(tmp_path, "cand.py", candidate("return ext.add_relu(a, b)"))
    argv = ["verify", "problem.py", "cand.py", "--json", "--device", "cpu", "--no-timing", "--set", "verify.trials=2"]
    env = {**os.environ, "KERNELMOSAIC_CACHE": str(served)}
    thin = subprocess.run([sys.executable, "-c", FORWARD_AND_REPORT, *argv], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    report = json.loads(thin.stderr.strip().splitlines()[-1])
    assert report["code"] == 0 and report["heavy"] == [], (report, thin.stderr[-2000:])
    forwarded = json.loads(thin.stdout)
    assert forwarded["accepted"] and forwarded["workers"]["served_by"].startswith("service pid")
    assert forwarded["correctness"]["trials"] == 2
    full = subprocess.run([sys.executable, "-m", "kernelmosaic.cli", *argv], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert full.returncode == 0, full.stderr[-2000:]
    again = json.loads(full.stdout)  # the full CLI took the same service: the build and the problem are warm
    assert again["accepted"] and again["candidate_sha256"] == forwarded["candidate_sha256"]
    assert again["workers"]["reference_reused"] and again["compile"]["cache_hit"]
    # an unusable input: exit status 2 and the file named either way
    argv_bad = ["verify", "missing.py", "cand.py", "--json", "--device", "cpu"]
    thin_bad = subprocess.run([sys.executable, "-m", "kernelmosaic", *argv_bad], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=120)
    full_bad = subprocess.run([sys.executable, "-m", "kernelmosaic.cli", *argv_bad], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=120)
    assert thin_bad.returncode == full_bad.returncode == 2
    assert f"problem {tmp_path / 'missing.py'}: no such file" in thin_bad.stderr, thin_bad.stderr
    assert "problem missing.py: no such file" in full_bad.stderr, full_bad.stderr


def test_what_is_not_handed_over(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNELMOSAIC_CACHE", str(tmp_path / "no-service"))
    monkeypatch.chdir(tmp_path)
    assert forward(["verify", "p.py", "c.py", "--json"]) is None  # no service answers
    for argv in (["verify", "p.py", "c.py"],  # human output stays with the full CLI (terminal width, colour)
                 ["verify", "p.py", "c.py", "--json", "--set", "verify.cache_dir=elsewhere"],
                 ["verify", "p.py", "c.py", "--json", "--set=verify.cache_dir=elsewhere"],
                 ["verify", "p.py", "c.py", "--json", "--config=k.toml"],
                 ["verify", "p.py", "c.py", "--json", "--alt", "a.py"],
                 ["tasks", "list", "--json"]):
        assert forward(argv) is None, argv
    (tmp_path / "kernelmosaic.toml").write_text("[verify]\ntrials = 3\n")  # settings of this directory
    assert forward(["verify", "p.py", "c.py", "--json"]) is None
    # the service refuses the same itself, whoever sends it
    for argv in (["verify", "p.py", "c.py", "--json", "--set", "verify.cache_dir=x"], ["verify", "p.py", "c.py"],
                 ["verify", "p.py", "c.py", "--json", "--alt", "a.py"], ["tasks", "list"]):
        assert run_verify(argv, tmp_path, tmp_path / "no-service")["ok"] is False, argv


def test_a_refused_option_value_reads_as_the_full_cli_words_it(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNELMOSAIC_CACHE", str(tmp_path / "cache"))
    reply = run_verify(["verify", "p.py", "c.py", "--json", "--device", "tpu"], tmp_path, tmp_path / "cache")
    assert reply["ok"] and reply["code"] == 2 and reply["stdout"] == ""
    assert "Invalid value for '--device': 'tpu' is not one of 'cuda', 'cpu'." in reply["stderr"], reply["stderr"]
