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
