"""A candidate's code under an outside tool (compute-sanitizer for the race check and `--sanitize`, ncu for the
agent's `profile`) is as confined as in its candidate worker: its own scratch folder as working directory, no write
outside it and the build cache, no TCP connection, no credential in its environment. The tool here is a stand-in
that runs the real target command (`kmworker.profile_one` with the confinement flags the verifier passes) the way
compute-sanitizer and ncu launch their target, and keeps the target's output where the test can read it; the
candidate's module-level code (what runs first, before any forward) tries each escape and prints what happened."""

from __future__ import annotations

import socket

import pytest

from kernelmosaic.verify.isolation import plan_for
from kernelmosaic.verify.pool import tool_layers

from .kit import PROBLEM_ADD_RELU, write

CUDA_PLAN = plan_for("cuda")  # the tools run on CUDA candidates: that device type's layers
NEEDS_LANDLOCK = pytest.mark.skipif(not CUDA_PLAN.landlock, reason="no Landlock on this kernel")

ESCAPES = '''
import os, socket
print("CWD", os.getcwd(), flush=True)
print("SECRET", os.environ.get("OPENAI_API_KEY", "absent"), flush=True)
for target in {targets!r}:
    try:
        with open(target, "w") as f:
            f.write("planted")
        print("WROTE", target, flush=True)
    except OSError as exc:
        print("REFUSED", target, type(exc).__name__, flush=True)
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=3).close()
    print("TCP connected", flush=True)
except OSError as exc:
    print("TCP refused", type(exc).__name__, flush=True)

import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, a, b):
        return a
'''


def _stand_in(tmp_path, monkeypatch, tool_name: str) -> None:
    """`tool_name` on PATH: drops the tool's own options (up to the interpreter) and runs the rest as its target."""
    tool = tmp_path / "bin" / tool_name
    tool.parent.mkdir(exist_ok=True)
    tool.write_text('#!/bin/sh\nwhile [ "$#" -gt 0 ] && [ "${1#/}" = "$1" ]; do shift; done\n'
                    f'"$@" >> {tmp_path}/target.out 2>&1\n'
                    'echo "========= ERROR SUMMARY: 0 errors"\n')
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tool.parent}:/usr/bin:/bin")


def _listener() -> socket.socket:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    return server


@NEEDS_LANDLOCK
def test_the_sanitizer_runs_candidate_code_confined(tmp_path, monkeypatch):
    from kernelmosaic.verify.sanitize import run_sanitizer

    _stand_in(tmp_path, monkeypatch, "compute-sanitizer")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-for-candidates")
    monkeypatch.chdir(tmp_path)  # the caller's working directory: no target may write here
    outside = [str(tmp_path / "planted.txt"), str(tmp_path / "bin" / "planted.txt")]
    with _listener() as server:
        candidate = write(tmp_path, "candidate.py", ESCAPES.format(targets=outside, port=server.getsockname()[1]))
        problem = write(tmp_path, "problem.py", PROBLEM_ADD_RELU)
        _, report = run_sanitizer(problem, candidate, {}, tmp_path / "cache", timeout_s=300, tools=("racecheck",))
    out = (tmp_path / "target.out").read_text()
    assert "SECRET absent" in out, out
    assert all(f"REFUSED {path}" in out for path in outside), out
    assert not (tmp_path / "planted.txt").exists() and not (tmp_path / "bin" / "planted.txt").exists()
    cwd = next(line.split(" ", 1)[1] for line in out.splitlines() if line.startswith("CWD "))
    assert cwd != str(tmp_path) and "km-sanitize-" in cwd, cwd
    if {"landlock-net", "netns"} & set(tool_layers("cuda")):
        assert "TCP refused" in out, out
    assert "landlock-fs" in report["isolation"], report


@NEEDS_LANDLOCK
def test_ncu_runs_candidate_code_confined(tmp_path, monkeypatch):
    from kernelmosaic.verify.profile import ncu_digest

    _stand_in(tmp_path, monkeypatch, "ncu")
    monkeypatch.setenv("HF_TOKEN", "hf-test-not-for-candidates")
    monkeypatch.chdir(tmp_path)
    outside = [str(tmp_path / "planted.txt")]
    with _listener() as server:
        candidate = write(tmp_path, "candidate.py", ESCAPES.format(targets=outside, port=server.getsockname()[1])
                          .replace("OPENAI_API_KEY", "HF_TOKEN"))
        problem = write(tmp_path, "problem.py", PROBLEM_ADD_RELU)
        digest, note = ncu_digest(problem, candidate, "cuda", {}, tmp_path / "cache", timeout_s=300)
    out = (tmp_path / "target.out").read_text()
    assert digest == {} and "ncu failed" in note  # the stand-in prints no metrics table
    assert "SECRET absent" in out and f"REFUSED {outside[0]}" in out, out
    assert not (tmp_path / "planted.txt").exists()
    if {"landlock-net", "netns"} & set(tool_layers("cuda")):
        assert "TCP refused" in out, out


def test_ncu_digest_reads_the_tools_table(tmp_path, monkeypatch):
    """The digest from ncu's CSV page (a units row first), with the candidate run confined under the tool."""
    from kernelmosaic.verify.profile import NCU_METRICS, ncu_digest

    _stand_in(tmp_path, monkeypatch, "ncu")
    names = list(NCU_METRICS)
    rows = [["ID", "Kernel Name", *names], ["", "", "nsecond", *["%"] * (len(names) - 1)],
            ["0", "add_relu_kernel(float const*, float*)", "1,234", *["7"] * (len(names) - 1)]]
    (tmp_path / "table.csv").write_text("==PROF== Disconnected\n" +
                                        "".join(",".join(f'"{c}"' for c in row) + "\n" for row in rows))
    tool = tmp_path / "bin" / "ncu"
    tool.write_text(tool.read_text().replace('echo "========= ERROR SUMMARY: 0 errors"', f"cat {tmp_path}/table.csv"))
    candidate = write(tmp_path, "candidate.py", "import torch.nn as nn\nclass ModelNew(nn.Module):\n    pass\n")
    problem = write(tmp_path, "problem.py", PROBLEM_ADD_RELU)
    digest, note = ncu_digest(problem, candidate, "cuda", {}, tmp_path / "cache", timeout_s=300)
    assert note == "1 kernel(s) profiled", note
    metrics = digest["add_relu_kernel(float const*, float*)"]
    assert metrics["time_ns"] == 1234.0 and metrics["sm_pct_of_peak"] == 7.0, metrics
    assert "km-profile-one isolation:" in (tmp_path / "target.out").read_text()  # the target ran under the tool
