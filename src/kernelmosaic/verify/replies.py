"""The timing replies of the workers, typed and checked on arrival.

A candidate's worker runs the candidate's code, so what it sends back is untrusted input: a reply whose numbers are
not finite, negative, missing or of the wrong type was not made by the worker's honest timer. Each reply is parsed
here into a typed model before any figure of it is used; one that does not parse ends the judgement, a rejection
for the candidate's worker (`timing-reply`) and `bad_problem` for the reference's (which runs no candidate code).
The worker side (`kmworker`) still speaks plain dicts: it imports only the standard library and torch.
"""

from __future__ import annotations

import math
from typing import Annotated, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from kernelmosaic.contracts.verdict import Finding, Status
from kernelmosaic.verify.judgement import Stop

__all__ = ["TimingReply", "CandidateTimingReply", "BurstReply", "timing_reply", "burst_reply", "parse_reply", "malformed", "Reply"]


def _finite(value: float) -> float:
    if not math.isfinite(value):
        raise ValueError("not a finite number")
    return value


Millis = Annotated[float, Field(ge=0.0, strict=True), AfterValidator(_finite)]
"""A duration in ms: a finite number (a float, or an int), never negative; never a string or a bool."""


class Reply(BaseModel):
    """A worker's reply: fields it does not know are ignored, the ones it reads are checked."""

    model_config = ConfigDict(extra="ignore", frozen=True)


class TimingReply(Reply):
    """A `time` request's figures (candidate, eager or `torch.compile`); the candidate's carries more (its calls and
    the checked call), which `judgement.check_reported` and the fingerprint checks read from the raw reply."""

    samples: list[Millis] = Field(min_length=1)
    """Per timed call: device time on CUDA (start → the stream done), host time on the CPU."""
    host_samples: list[Millis] = Field(min_length=1)
    """Per host-inclusive call (on an idle device)."""
    host: list[Millis] = Field(default_factory=list)
    """Per call: the host's wall time of the call and its synchronisation."""
    lead_short: int = Field(0, ge=0, strict=True)
    lead_us: Millis = 0.0
    escaped_ms: Millis | None = None
    flush_bytes: int = Field(0, ge=0, strict=True)


class CandidateTimingReply(TimingReply):
    escaped_ms: Millis
    """Device work still running once the call's stream was done (0 on the CPU): required of the candidate."""


class BurstReply(Reply):
    reported_ms: Millis
    """The worker's own clock around the burst's calls."""


R = TypeVar("R", bound=BaseModel)


def malformed(detail: str, candidate: bool, rule: str = "timing-reply") -> Stop:
    """The Stop for a reply that is not what the worker sends: `bad_problem` for the reference's worker (it runs no
    candidate code); for the candidate's, a rejection under `rule` (`timing-reply`: a timing anomaly;
    `worker-reply`, run_replies.py: an integrity violation)."""
    if not candidate:
        return Stop(Status.bad_problem, f"the reference worker sent a malformed reply to {detail}")
    timing = rule == "timing-reply"
    sender = "the worker's timer" if timing else "the worker"
    return Stop(Status.timing_anomaly if timing else Status.integrity_violation,
                f"the candidate's worker sent a malformed reply to {detail}",
                [Finding(rule=rule, severity="reject",
                         message=f"a {'timing ' if timing else ''}reply from the candidate's process was not what "
                                 f"{sender} sends (a field missing, of another type, or out of range)",
                         evidence=detail)])


def parse_reply(model: type[R], raw: object, what: str, candidate: bool, rule: str = "timing-reply") -> R:
    """`raw` as `model`, or the Stop of `malformed` naming the first field wrong."""
    try:
        return model.model_validate(raw, strict=True)  # a count is an int, a flag a bool: nothing coerced
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the reply"
        raise malformed(f"{what}: {where}: {first['msg']}", candidate, rule) from None


def timing_reply(raw: object, what: str, candidate: bool) -> TimingReply:
    """`raw` parsed (the candidate's with every field its timer sends), or Stop naming the first field wrong."""
    return parse_reply(CandidateTimingReply if candidate else TimingReply, raw, what, candidate)


def burst_reply(raw: object, what: str, candidate: bool) -> BurstReply:
    return parse_reply(BurstReply, raw, what, candidate)
