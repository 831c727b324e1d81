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
