"""The escaped-work rule: device-wide completion trailing the candidate's stream (side streams) is rejected."""

from __future__ import annotations

from kernelmosaic.verify.judgement import ESCAPED_FLOOR_MS, escaped_work


def test_an_honest_kernel_whose_stream_covers_its_work_passes():
    assert escaped_work(stream_ms=2.45, escaped_ms=0.004) is None
    assert escaped_work(stream_ms=0.085, escaped_ms=ESCAPED_FLOOR_MS) is None  # the floor absorbs host jitter


def test_work_left_on_another_stream_is_rejected_with_evidence():
    finding = escaped_work(stream_ms=2.45, escaped_ms=5.6)
    assert finding is not None and finding.rule == "timing-escaped-work" and finding.severity == "reject"
    assert "5.600 ms" in finding.message and "2.450 ms" in finding.message


def test_the_threshold_scales_with_the_kernel():
    assert escaped_work(stream_ms=10.0, escaped_ms=1.0) is None  # 10% of a long kernel: within the share
    assert escaped_work(stream_ms=1.0, escaped_ms=1.0) is not None
