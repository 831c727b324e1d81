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

__all__ = ["TimingReply", "CandidateTimingReply", "BurstReply", "timing_reply", "burst_reply"]


def _finite(value: float) -> float:
    if not math.isfinite(value):
        raise ValueError("not a finite number")
    return value


Millis = Annotated[float, Field(ge=0.0, strict=True), AfterValidator(_finite)]
"""A duration in ms: a finite number (a float, or an int), never negative; never a string or a bool."""


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class TimingReply(_Reply):
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


class BurstReply(_Reply):
    reported_ms: Millis
    """The worker's own clock around the burst's calls."""


R = TypeVar("R", bound=_Reply)


def _parse(model: type[R], raw: object, what: str, candidate: bool) -> R:
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the reply"
        detail = f"{what}: {where}: {first['msg']}"
        if not candidate:
            raise Stop(Status.bad_problem, f"the reference worker sent a malformed reply to {detail}") from None
        raise Stop(Status.timing_anomaly, f"the candidate's worker sent a malformed reply to {detail}",
                   [Finding(rule="timing-reply", severity="reject",
                            message="a timing reply from the candidate's process was not what the worker's timer "
                                    "sends (a number not finite, negative, missing or of another type)",
                            evidence=detail)]) from None


def timing_reply(raw: object, what: str, candidate: bool) -> TimingReply:
    """`raw` parsed (the candidate's with every field its timer sends), or Stop naming the first field wrong."""
    return _parse(CandidateTimingReply if candidate else TimingReply, raw, what, candidate)


def burst_reply(raw: object, what: str, candidate: bool) -> BurstReply:
    return _parse(BurstReply, raw, what, candidate)
