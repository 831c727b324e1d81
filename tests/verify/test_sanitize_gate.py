"""The device is held for a sanitizer run's forwards only, not for the start of Python and torch under the tool.

`profile_one --gate GO` (the target under compute-sanitizer) sets up, writes `km-ready` and waits for GO before it
runs the candidate: tested here with the real target on the CPU device. `run_sanitizer` enters its `gate` (the
verifier's shared device hold) once the first tool's target is ready, writes each target's GO as it becomes ready, and
leaves the hold when the last tool has ended: tested with a stand-in tool that keeps the target's protocol (the real
compute-sanitizer needs a GPU: tests/verify/test_race_check_gpu.py). A tool whose target cannot set up while another
lives (the first GPU run of the all-ready-then-go design hung so, idle, until its 600 s limit) is let go after it."""

from __future__ import annotations

import contextlib
import subprocess
import time

from kernelmosaic.verify.pool import tool_command
from kernelmosaic.verify.sandbox.kmworker.profile_one import READY

from .kit import PROBLEM_ADD_RELU, write

MARKING = '''
import pathlib
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, a, b):
        pathlib.Path("forward-ran").touch()
        return (a + b).relu()
'''


def test_a_gated_target_sets_up_then_waits_for_its_go_before_the_forward(tmp_path):
    problem = write(tmp_path, "problem.py", PROBLEM_ADD_RELU)
    candidate = write(tmp_path, "candidate.py", MARKING)
    scratch, go = tmp_path / "scratch", tmp_path / "go"
    scratch.mkdir()
    command = tool_command(problem, candidate, "cpu", tmp_path / "cache", scratch, gate=go)
    proc = subprocess.Popen(command.around([]), cwd=command.cwd, env=command.env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not (scratch / READY).exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the target never said it was set up"
            time.sleep(0.05)
        time.sleep(0.5)
        assert proc.poll() is None and not (scratch / "forward-ran").exists(), "the forward ran before its go"
        go.touch()
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert (scratch / "forward-ran").exists()
    stages = [line.split()[2] for line in err.splitlines() if line.startswith("km-profile-one stage ")]
    assert stages == ["start", "torch", "loaded", "ready", "go", "done"], err


def test_an_ungated_target_runs_at_once(tmp_path):
    """ncu's target (the agent's profile) takes no gate."""
    problem = write(tmp_path, "problem.py", PROBLEM_ADD_RELU)
    candidate = write(tmp_path, "candidate.py", MARKING)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    command = tool_command(problem, candidate, "cpu", tmp_path / "cache", scratch)
    done = subprocess.run(command.around([]), cwd=command.cwd, env=command.env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert (scratch / "forward-ran").exists() and not (scratch / READY).exists()


# A stand-in compute-sanitizer that keeps the target's protocol: it finds --gate GO among its arguments, takes
# SETUP seconds to start (as Python and torch do under the tool), says it is ready, waits for GO, notes when it saw
# it, and answers with a clean summary.
STAND_IN = r'''#!/bin/sh
tool="$2"; go=""; prev=""
for a in "$@"; do [ "$prev" = "--gate" ] && go="$a"; prev="$a"; done
if [ -e {setup_dir}/one-session ]; then  # one target at a time: set up only once the other has ended
  until mkdir {setup_dir}/session 2>/dev/null; do sleep 0.02; done
  trap 'rmdir {setup_dir}/session' EXIT
fi
sleep "$(cat {setup_dir}/setup-$tool)"
echo "ready $(date +%s.%N)" >> {setup_dir}/$tool.log
touch km-ready
while [ ! -e "$go" ]; do sleep 0.02; done
echo "go $(date +%s.%N)" >> {setup_dir}/$tool.log
sleep 0.3
echo "done $(date +%s.%N)" >> {setup_dir}/$tool.log
echo "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)"
echo "========= ERROR SUMMARY: 0 errors"
'''


def test_the_device_is_held_from_every_target_set_up_to_the_last_tools_end(tmp_path, monkeypatch):
    from kernelmosaic.verify.sanitize import run_sanitizer

    tool = tmp_path / "bin" / "compute-sanitizer"
    tool.parent.mkdir()
    tool.write_text(STAND_IN.format(setup_dir=tmp_path))
    tool.chmod(0o755)
    (tmp_path / "setup-racecheck").write_text("0.3")
    (tmp_path / "setup-synccheck").write_text("1.5")  # the slower target decides when the hold begins
    monkeypatch.setenv("PATH", f"{tool.parent}:/usr/bin:/bin")
    held: list[float] = []

    @contextlib.contextmanager
    def gate():
        held.append(time.time())
        yield
        held.append(time.time())

    problem = write(tmp_path, "problem.py", PROBLEM_ADD_RELU)
    findings, report = run_sanitizer(problem, tmp_path / "candidate.py", {}, tmp_path / "cache", timeout_s=60,
                                     tools=("racecheck", "synccheck"), gate=gate, gated=True)
    assert findings == [] and len(held) == 2
    seen = {name: {k: float(v) for k, v in (line.split() for line in (tmp_path / f"{name}.log").read_text()
                                            .splitlines())} for name in ("racecheck", "synccheck")}
    assert seen["racecheck"]["ready"] <= held[0] <= seen["racecheck"]["go"]  # held once the first is set up
    for name in ("racecheck", "synccheck"):
        assert seen[name]["ready"] <= seen[name]["go"] and held[0] <= seen[name]["go"], (name, seen, held)
        assert seen[name]["done"] <= held[1], (name, seen, held)  # and until the last forward ended
        assert report[name]["errors"] == 0
    assert seen["racecheck"]["go"] < seen["synccheck"]["ready"]  # the faster target did not wait for the slower
    assert 0.25 <= report["racecheck"]["set_up_s"] < 1.4 and report["racecheck"]["device_held_s"] >= 1.2


def test_a_tool_that_sets_up_only_after_the_other_has_ended_is_not_waited_for_first(tmp_path, monkeypatch):
    """Two targets that cannot be set up at once (one debugging session per device): each gets its go when ready,
    so the second sets up after the first has run, instead of both waiting on each other until the time limit."""
    from kernelmosaic.verify.sanitize import run_sanitizer

    tool = tmp_path / "bin" / "compute-sanitizer"
    tool.parent.mkdir()
    tool.write_text(STAND_IN.format(setup_dir=tmp_path))
    tool.chmod(0o755)
    (tmp_path / "one-session").touch()
    (tmp_path / "setup-racecheck").write_text("0.3")
    (tmp_path / "setup-synccheck").write_text("0.3")
    monkeypatch.setenv("PATH", f"{tool.parent}:/usr/bin:/bin")
    problem = write(tmp_path, "problem.py", PROBLEM_ADD_RELU)
    started = time.monotonic()
    findings, report = run_sanitizer(problem, tmp_path / "candidate.py", {}, tmp_path / "cache", timeout_s=60,
                                     tools=("racecheck", "synccheck"), gated=True)
    assert time.monotonic() - started < 30, report
    assert findings == [] and all(report[name]["errors"] == 0 for name in ("racecheck", "synccheck")), report
    first, second = sorted(("racecheck", "synccheck"), key=lambda n: float(
        (tmp_path / f"{n}.log").read_text().split()[1]))
    assert float((tmp_path / f"{first}.log").read_text().split()[-1]) <= float(
        (tmp_path / f"{second}.log").read_text().split()[1])  # one after the other


def test_a_target_that_dies_before_it_is_ready_does_not_keep_the_others_waiting(tmp_path, monkeypatch):
    from kernelmosaic.verify.sanitize import run_sanitizer

    tool = tmp_path / "bin" / "compute-sanitizer"
    tool.parent.mkdir()
    tool.write_text('#!/bin/sh\necho "Traceback: ImportError in the candidate" >&2\nexit 1\n')
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tool.parent}:/usr/bin:/bin")
    problem = write(tmp_path, "problem.py", PROBLEM_ADD_RELU)
    started = time.monotonic()
    findings, report = run_sanitizer(problem, tmp_path / "candidate.py", {}, tmp_path / "cache", timeout_s=60,
                                     tools=("racecheck",), gated=True)
    assert time.monotonic() - started < 30
    assert report["racecheck"]["errors"] is None and "ImportError" in report["racecheck"]["note"]
    assert [f.rule for f in findings] == ["sanitizer-incomplete"]


def test_ungated_the_device_is_held_for_the_tools_whole_run(tmp_path, monkeypatch):
    """The default (`verify.sanitize_gated` off): the hold is entered before any tool starts and left after the last
    ends, and no target is told to wait for a go file."""
    from kernelmosaic.verify.config import VerifyConfig
    from kernelmosaic.verify.sanitize import run_sanitizer

    assert VerifyConfig().sanitize_gated is False
    tool = tmp_path / "bin" / "compute-sanitizer"
    tool.parent.mkdir()
    tool.write_text(f'#!/bin/sh\necho "start $(date +%s.%N) $*" >> {tmp_path}/$2.log\nsleep 0.3\n'
                    f'echo "end $(date +%s.%N)" >> {tmp_path}/$2.log\n'
                    'echo "========= ERROR SUMMARY: 0 errors"\n')
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tool.parent}:/usr/bin:/bin")
    held: list[float] = []

    @contextlib.contextmanager
    def gate():
        held.append(time.time())
        yield
        held.append(time.time())

    problem = write(tmp_path, "problem.py", PROBLEM_ADD_RELU)
    findings, report = run_sanitizer(problem, tmp_path / "candidate.py", {}, tmp_path / "cache", timeout_s=60,
                                     tools=("memcheck", "racecheck"), gate=gate)
    assert findings == [] and len(held) == 2, (findings, report)
    for name in ("memcheck", "racecheck"):
        start, end = ((float(line.split()[1]), line) for line in (tmp_path / f"{name}.log").read_text().splitlines())
        assert held[0] <= start[0] and end[0] <= held[1], (name, held)
        assert "--gate" not in start[1]
        assert report[name]["device_held_s"] >= 0.3 and "set_up_s" not in report[name]
