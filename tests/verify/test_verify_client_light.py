"""`kernelmosaic verify` with a verifier service running is a light client: it imports no torch and no verifier.

Importing torch alone costs the client 1-2 s, more than a warm service needs to judge a built candidate.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from . import kit

DRIVER = Path(__file__).with_name("light_client_driver.py")


def test_verify_client_imports_nothing_heavy(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    problem = kit.write(tmp_path, "problem.py", kit.PROBLEM_ADD_RELU)
    candidate = kit.write(tmp_path, "cand.py", kit.candidate("return ext.add_relu(a, b)"))
    env = {**os.environ, "KERNELMOSAIC_CACHE": str(cache)}
    res = subprocess.run([sys.executable, str(DRIVER), str(cache), str(problem), str(candidate)], env=env,
                         capture_output=True, text=True, timeout=60, check=False)
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout.strip().splitlines()[-1])
    assert report["heavy"] == [], f"the verify client imported {report['heavy']}"
    # The client asked the service which device it sees, then handed it the candidate, and printed its verdict.
    assert [r["op"] for r in report["requests"]] == ["device", "verify"]
    assert report["requests"][1]["device"] == "cpu"
    assert report["exit"] == 1
    assert json.loads(report["stdout"])["message"] == "judged cand.py"


def _driver(tmp_path, *args: str) -> tuple[subprocess.CompletedProcess, dict]:
    cache = tmp_path / "cache"
    cache.mkdir(exist_ok=True)
    env = {**os.environ, "KERNELMOSAIC_CACHE": str(cache)}
    res = subprocess.run([sys.executable, str(DRIVER), str(cache), *args], env=env, capture_output=True, text=True,
                         timeout=900, check=False)
    assert res.returncode == 0, res.stderr[-3000:]
    return res, json.loads(res.stdout.strip().splitlines()[-1])


def test_a_service_that_stops_mid_request_leaves_the_verdict_to_this_process(tmp_path):
    """The third newcomer trial: `verify` whose service was stopped while judging exited 2 with no verdict. The
    candidate is judged here instead, and the client says why."""
    problem = kit.write(tmp_path, "problem.py", kit.PROBLEM_ADD_RELU)
    candidate = kit.write(tmp_path, "cand.py", kit.candidate("return ext.add_relu(a, b)"))
    res, report = _driver(tmp_path, str(problem), str(candidate), "vanish")
    assert [r["op"] for r in report["requests"]] == ["device", "verify"]
    assert report["exit"] == 0, res.stderr[-3000:]
    verdict = json.loads(report["stdout"])
    assert verdict["accepted"] and verdict["status"] == "accepted", verdict["message"]
    assert "stopped before it answered" in res.stderr and "judging in this process" in res.stderr, res.stderr[-2000:]


def test_a_batch_keeps_what_the_service_answered_and_judges_the_rest_here(tmp_path):
    pairs = tmp_path / "pairs"
    for name in ("a", "b"):
        (pairs / name).mkdir(parents=True)
        kit.write(pairs / name, "problem.py", kit.PROBLEM_ADD_RELU)
        kit.write(pairs / name, "candidate.py", kit.candidate("return ext.add_relu(a, b)"))
    out = tmp_path / "verdicts.jsonl"
    res, report = _driver(tmp_path, str(pairs), str(out), "vanish-batch")
    assert "verify_many" in [r["op"] for r in report["requests"]]
    verdicts = [json.loads(line)["verdict"] for line in out.read_text().splitlines() if line.strip()]
    assert len(verdicts) == 2, verdicts
    by_service = [v for v in verdicts if v["message"] == "judged by the service"]
    assert len(by_service) == 1, verdicts  # the answer it gave is kept, not judged twice
    here = [v for v in verdicts if v not in by_service]
    assert here[0]["accepted"] and here[0]["status"] == "accepted", here[0]["message"]
    assert "stopped after answering 1 of 2 pairs" in res.stderr, res.stderr[-2000:]
