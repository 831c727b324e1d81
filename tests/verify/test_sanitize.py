"""compute-sanitizer output parsing (the tool itself runs only on a GPU, via --sanitize)."""

from __future__ import annotations


def test_sanitizer_summary_parsing():
    from kernelmosaic.verify.sanitize import parse_summary

    assert parse_summary("========= Invalid __global__ write of size 4\n========= ERROR SUMMARY: 3 errors\n") == 3
    assert parse_summary("========= ERROR SUMMARY: 0 errors") == 0
    assert parse_summary("Device not supported") is None


def test_racecheck_summary_is_parsed_too():
    """racecheck words its summary differently; the H200 run showed it (counted as 'no summary' before this)."""
    from kernelmosaic.verify.sanitize import parse_summary

    assert parse_summary("========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)") == 0
    assert parse_summary("========= RACECHECK SUMMARY: 5 hazards displayed (2 errors, 3 warnings)") == 2


def test_the_three_tools_are_each_run_and_reported_in_order(tmp_path, monkeypatch):
    """The tools run side by side; each one's own result lands under its own name, and only memcheck/racecheck errors
    reject. A stand-in `compute-sanitizer` on PATH answers per tool (the real one needs a GPU: tests/verify/test_verify_gpu.py)."""
    from kernelmosaic.verify.sanitize import run_sanitizer

    tool = tmp_path / "compute-sanitizer"
    tool.write_text("#!/bin/sh\n"
                    'case "$2" in\n'
                    '  memcheck) echo "========= Invalid __global__ read of size 4"; echo "========= ERROR SUMMARY: 2 errors";;\n'
                    '  racecheck) echo "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)";;\n'
                    '  initcheck) echo "========= ERROR SUMMARY: 1 error";;\n'
                    "esac\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    (tmp_path / "p.py").write_text(PROBLEM)
    findings, report = run_sanitizer(tmp_path / "p.py", tmp_path / "c.py", {})
    assert [k for k in report if k not in ("ran", "shapes")] == ["memcheck", "racecheck", "initcheck"]
    assert (report["memcheck"]["errors"], report["racecheck"]["errors"], report["initcheck"]["errors"]) == (2, 0, 1)
    assert [(f.rule, f.severity) for f in findings] == [("sanitizer-memcheck", "reject"), ("sanitizer-initcheck", "flag")]
    assert "Invalid __global__ read" in findings[0].evidence


PROBLEM = """\
import torch

batch_size = 4096
dim = 4096
features = 512


class Model(torch.nn.Module):
    def __init__(self, features):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.ones(features))

    def forward(self, x):
        return x


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [features]
"""


def test_small_shapes_shrink_only_the_input_sizes_to_odd_sixteenths():
    from kernelmosaic.tasks.shapes import small_shapes, small_size

    assert small_shapes(PROBLEM) == {"batch_size": 257, "dim": 257}  # `features` also builds the model: kept
    assert [small_size(v) for v in (7, 64, 65, 128, 1000, 4096, 16384)] == [7, 64, 33, 33, 63, 257, 1025]
    assert small_shapes("this is not python(") == {}


def _stand_in(tmp_path, monkeypatch, body: str):
    tool = tmp_path / "bin" / "compute-sanitizer"
    tool.parent.mkdir()
    # $8 is the problem file: compute-sanitizer --tool NAME --print-limit 5 python -m kmworker.profile_one PROBLEM ...
    tool.write_text("#!/bin/sh\n" f'grep -h "^batch_size" "$8" >> {tmp_path}/seen\n' + body)
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tool.parent}:/usr/bin:/bin")
    (tmp_path / "p.py").write_text(PROBLEM)


def test_the_tools_run_the_problem_at_its_small_shapes(tmp_path, monkeypatch):
    from kernelmosaic.verify.sanitize import run_sanitizer

    _stand_in(tmp_path, monkeypatch, 'echo "========= ERROR SUMMARY: 0 errors"\n')
    findings, report = run_sanitizer(tmp_path / "p.py", tmp_path / "c.py", {})
    assert findings == [] and report["shapes"] == {"batch_size": 257, "dim": 257}
    assert (tmp_path / "seen").read_text().splitlines() == ["batch_size = 257"] * 3
    assert (tmp_path / "p.py").read_text() == PROBLEM  # the task's own file is never rewritten


def test_a_forward_that_fails_at_the_small_shapes_is_sanitized_at_its_own(tmp_path, monkeypatch):
    from kernelmosaic.verify.sanitize import run_sanitizer

    _stand_in(tmp_path, monkeypatch, 'echo "========= ERROR SUMMARY: 0 errors"\n'
                                     'if grep -q "^batch_size = 257" "$8"; then exit 1; fi\n')
    findings, report = run_sanitizer(tmp_path / "p.py", tmp_path / "c.py", {})
    assert report["shapes"].startswith("as stated") and findings == []
    assert sorted((tmp_path / "seen").read_text().splitlines()) == ["batch_size = 257"] * 3 + ["batch_size = 4096"] * 3
    assert all(report[t]["exit"] == 0 for t in ("memcheck", "racecheck", "initcheck"))


def test_errors_only_at_the_small_shapes_are_a_flag_and_the_stated_shapes_decide(tmp_path, monkeypatch):
    """A kernel written for the stated size may read out of bounds elsewhere: legitimate under kernelbench."""
    from kernelmosaic.verify.sanitize import run_sanitizer

    _stand_in(tmp_path, monkeypatch, 'if grep -q "^batch_size = 257" "$8"; then\n'
                                     '  echo "========= Invalid __global__ read of size 4"; echo "========= ERROR SUMMARY: 3 errors"\n'
                                     'else echo "========= ERROR SUMMARY: 0 errors"; fi\n')
    findings, report = run_sanitizer(tmp_path / "p.py", tmp_path / "c.py", {})
    assert [(f.rule, f.severity) for f in findings] == [("sanitizer-small-shapes", "flag")]
    assert "sanitizer-memcheck" in findings[0].evidence and report["shapes"] == "as stated (the small shapes showed errors)"
    assert report["memcheck"] == {"errors": 0, "exit": 0}
