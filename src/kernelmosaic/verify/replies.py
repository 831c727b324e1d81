"""The timing replies of the workers, typed and checked on arrival.

A candidate's worker runs the candidate's code, so what it sends back is untrusted input: a reply whose numbers are
not finite, negative, missing or of the wrong type was not made by the worker's honest timer. Each reply is parsed
here into a typed model before any figure of it is used; one that does not parse ends the judgement, a rejection
for the candidate's worker (`timing-reply`) and `bad_problem` for the reference's (which runs no candidate code).
The worker side (`kmworker`) still speaks plain dicts: it imports only the standard library and torch.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, TypeVar

import torch
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError
from typing_extensions import TypedDict

from kernelmosaic.contracts.verdict import Finding, Status
from kernelmosaic.verify.judgement import Stop

__all__ = ["TimingReply", "CandidateTimingReply", "BurstReply", "BurstCheckReply", "ChecksReply", "Print", "TimedCall",
           "timing_reply", "candidate_timing_reply", "burst_reply", "parse_reply", "malformed", "Reply"]


def _finite(value: float) -> float:
    if not math.isfinite(value):
        raise ValueError("not a finite number")
    return value


Millis = Annotated[float, Field(ge=0.0, strict=True), AfterValidator(_finite)]
"""A duration in ms: a finite number (a float, or an int), never negative; never a string or a bool."""


class Reply(BaseModel):
    """A worker's reply: fields it does not know are ignored, the ones it reads are checked."""

    model_config = ConfigDict(extra="ignore", frozen=True)


class Print(TypedDict, total=False):
    """One item of an output's fingerprint (`kmworker.fingerprint`): the first says whether forward returned a tuple,
    each next one describes a returned value and, for a tensor, its weighted sums."""

    tuple: bool
    type: str
    shape: list[int]
    dtype: str
    dot: float
    nan: int
    posinf: int
    neginf: int
    w2: float
    w2abs: float
    w2sq: float


class TimedCall(Reply):
    """One timed call as the candidate's worker reports it: the seed its inputs were drawn from, its fingerprint."""

    seed: int = Field(strict=True)
    fp: list[Print]


class TimingReply(Reply):
    """A `time` request's figures (candidate, eager or `torch.compile`); the candidate's carries more
    (`CandidateTimingReply`)."""

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
    model_config = ConfigDict(arbitrary_types_allowed=True)

    escaped_ms: Millis
    """Device work still running once the call's stream was done (0 on the CPU): required of the candidate."""
    integrity: list[str]
    """What the round changed in the verifier's environment (empty: nothing)."""
    calls: list[TimedCall] = Field(min_length=1)
    """Every call of the round, warm-up ones first, each with its seed and fingerprint (`judgement.check_reported`)."""
    checked_inputs: list[Any] | dict[str, int]
    """The inputs of the call copied in full, after forward; in large-output mode {"seed": s}."""
    checked_seed: int = -1
    """The seed that call drew its inputs from (the reference redraws them to see whether forward wrote into them)."""
    checked_outputs: dict[str, Any]
    """Its outputs as the worker packs them (in large-output mode, handed out in place)."""
    torch_ops: dict[str, int] = Field(default_factory=dict)
    """Where the round had a watched call (`record_at`): the operators its forward dispatched outside its kernels."""
    kernel_ops: dict[str, int] = Field(default_factory=dict)
    """The same inside the candidate's kernel calls (their own ATen calls)."""
    watched: bool = False
    """The round had a watched call (`record_at`)."""
    kernel_calls: dict[str, int] = Field(default_factory=dict)
    """The candidate's kernel calls in the watched call (entry point -> calls)."""


class ChangedReply(Reply):
    """The reference's `inputs_changed`: which of a timed call's reported inputs differ from their draw."""

    changed: list[int]


class BurstCheckReply(Reply):
    integrity: list[str]
    """What the burst changed in the verifier's environment (empty: nothing)."""


class ChecksReply(Reply):
    """The reference's fingerprints of the calls named by seed (`check_calls`)."""

    prints: list[list[Print]]


class BurstInputsReply(Reply):
    """The reference's `burst_inputs`: whether no two calls of its burst share their inputs (`BurstInputs.distinct`;
    the candidate's reply to the same request is not read)."""

    distinct: bool = False


class PrintCostReply(Reply):
    """The reference's `burst_print_cost`: what one burst call's projection adds, in ms."""

    ms: Millis


class BurstReply(Reply):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    reported_ms: Millis
    """The worker's own clock around the burst's calls."""
    prints: torch.Tensor | None = None
    """The candidate's: every call's projection (calls x outputs, float64, host), checked by `timed._picked`."""


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


def timing_reply(raw: object, what: str) -> TimingReply:
    """A baseline's (eager or `torch.compile`) reply parsed, or Stop naming the first field wrong."""
    return parse_reply(TimingReply, raw, what, candidate=False)


def candidate_timing_reply(raw: object, what: str) -> CandidateTimingReply:
    """The candidate's reply parsed with every field its timer sends, or Stop (`timing-reply`) naming the first wrong."""
    return parse_reply(CandidateTimingReply, raw, what, candidate=True)


def burst_reply(raw: object, what: str, candidate: bool) -> BurstReply:
    return parse_reply(BurstReply, raw, what, candidate)
