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
    findings, report = run_sanitizer(tmp_path / "p.py", tmp_path / "c.py", {})
    assert [k for k in report if k != "ran"] == ["memcheck", "racecheck", "initcheck"]
    assert (report["memcheck"]["errors"], report["racecheck"]["errors"], report["initcheck"]["errors"]) == (2, 0, 1)
    assert [(f.rule, f.severity) for f in findings] == [("sanitizer-memcheck", "reject"), ("sanitizer-initcheck", "flag")]
    assert "Invalid __global__ read" in findings[0].evidence
