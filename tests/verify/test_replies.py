"""The workers' timing replies are parsed before any figure is used (verify/replies.py): what an honest timer sends
passes; a reply from the candidate's process with a number no timer sends is a `timing-reply` rejection, the
reference's a `bad_problem`."""

from __future__ import annotations

import math

import pytest

from kernelmosaic.contracts.verdict import Status
from kernelmosaic.verify.judgement import Stop
from kernelmosaic.verify.replies import burst_reply, candidate_timing_reply, timing_reply

HONEST = {"samples": [0.021, 0.019], "host_samples": [0.02], "host": [0.03, 0.03], "lead_us": 0.0, "lead_short": 0,
          "escaped_ms": 0.0, "flush_bytes": 33554432, "integrity": [], "checked_inputs": [], "checked_outputs": {},
          "calls": [{"seed": 1, "fp": [{"tuple": False}, {"type": "Tensor", "shape": [2], "dtype": "float32", "dot": 0.5,
                                                          "nan": 0, "posinf": 0, "neginf": 0}]}]}


def test_an_honest_reply_parses_with_its_figures():
    reply = candidate_timing_reply(HONEST, "timing the candidate")
    assert reply.samples == [0.021, 0.019] and reply.escaped_ms == 0.0 and reply.flush_bytes == 33554432
    eager = {k: v for k, v in HONEST.items() if k not in ("escaped_ms", "lead_us", "calls", "integrity")}
    assert timing_reply(eager, "timing eager").escaped_ms is None  # the reference sends none
    assert burst_reply({"reported_ms": 51.2}, "the wall-clock burst", candidate=True).reported_ms == 51.2


@pytest.mark.parametrize("forged, field", [
    ({"samples": [0.02, -0.5]}, "samples.1"),  # a negative time
    ({"samples": [math.nan]}, "samples.0"),
    ({"host_samples": []}, "host_samples"),  # nothing timed
    ({"samples": ["0.01"]}, "samples.0"),  # a string where the timer sends a number
    ({"escaped_ms": None}, "escaped_ms"),  # the escaped-work figure withheld
    ({"lead_short": -1}, "lead_short"),
    ({"calls": [{"seed": "1", "fp": []}]}, "calls.0.seed"),  # what check_reported compares with the seeds asked
    ({"calls": [{"seed": 1, "fp": [{"tuple": False}, {"dot": "0.5"}]}]}, "calls.0.fp.1.dot"),
    ({"calls": []}, "calls"),
    ({"integrity": None}, "integrity"),
    ({"checked_inputs": "x"}, "checked_inputs.list[any]"),  # neither a list nor a {"seed": s}
])
def test_a_forged_candidate_reply_is_a_timing_reply_rejection(forged, field):
    with pytest.raises(Stop) as caught:
        candidate_timing_reply({**HONEST, **forged}, "timing the candidate")
    stop = caught.value
    assert stop.status == Status.timing_anomaly and [f.rule for f in stop.findings] == ["timing-reply"]
    assert f"timing the candidate: {field}:" in stop.findings[0].evidence, stop.findings[0].evidence


def test_a_malformed_reference_reply_is_bad_problem_and_an_infinite_burst_is_refused():
    with pytest.raises(Stop) as caught:
        timing_reply({**HONEST, "samples": []}, "timing eager")
    assert caught.value.status == Status.bad_problem and not caught.value.findings
    with pytest.raises(Stop) as caught:
        burst_reply({"reported_ms": math.inf}, "the wall-clock burst", candidate=True)
    assert "reported_ms" in caught.value.findings[0].evidence
