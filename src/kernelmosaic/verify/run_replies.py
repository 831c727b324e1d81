"""The candidate worker's replies to everything but timing (load, construction, the trials, the refill check, the
kernel census, peak memory), typed and checked on arrival, as replies.py checks the timing replies.

The candidate's native code shares the process that builds these replies, so a reply is untrusted input: one whose
fields are missing or of another type is a rejection (`worker-reply`, an integrity violation) naming the field, not
a KeyError inside the verifier. Outputs keep the worker's packaging (`kmworker.common.package_outputs`), checked for
its shape: a flag, one description per returned value and one host tensor per value.
"""

from __future__ import annotations

from typing import Any

import torch
from pydantic import ConfigDict, Field
from typing_extensions import TypedDict

from kernelmosaic.contracts.verdict import Census
from kernelmosaic.verify.build_replies import BuildRecord
from kernelmosaic.verify.judgement import Stop
from kernelmosaic.verify.replies import R, Reply, malformed, parse_reply

__all__ = ["LoadReply", "InitReply", "ForwardEnd", "TrialRun", "RunReply", "SharedRunReply", "RefillReply", "SharedRefillReply",
           "PeakReply", "ProbeReply", "candidate_reply", "candidate_reply_stop", "census_reply"]


class Packaged(TypedDict):
    """One forward's return value as the worker packs it: `tuple` when forward returned one, then per value its
    description (`type`, and for a tensor `dtype`, `shape`, `device`) and its tensor (empty for a non-tensor)."""

    __pydantic_config__ = ConfigDict(arbitrary_types_allowed=True)  # type: ignore[misc]

    tuple: bool
    meta: list[dict[str, Any]]
    tensors: list[torch.Tensor]


class LoadReply(Reply):
    builds: list[BuildRecord]
    """One record per extension the candidate's import built or found cached."""
    integrity: list[str]
    """What the import changed in the verifier's environment (empty: nothing)."""


class InitReply(Reply):
    copied: list[str]
    """Parameters and buffers copied from the reference by name and shape."""
    skipped: list[str]
    integrity: list[str]


class ForwardEnd(Reply):
    """What every run of forward ends with: the environment checked, and threads left running counted."""

    integrity: list[str]
    extra_threads: int = Field(strict=True)


class TrialRun(Reply):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    outputs: Packaged
    mutated: list[int]
    """The inputs forward wrote into."""
    repeat: Packaged | None = None
    """Trial 0's outputs of a second forward on the same inputs."""


class RunReply(ForwardEnd):
    trials: list[TrialRun] = Field(min_length=1)
    aliased: list[int] = Field(default_factory=list)
    """Trials whose outputs share memory with the previous trial's (a module-held buffer returned each call)."""


class SharedRunReply(ForwardEnd):
    """`run_shared` (large outputs, verify/large.py): outputs exported in place, so only described here."""

    outputs: dict[str, Any]
    mutated: list[int]
    repeat: dict[str, Any] | None = None


class SharedRefillReply(Reply):
    """`refill_shared` (large outputs): the refilled run's outputs exported in place, so only described here."""

    outputs: dict[str, Any]
    versions: list[int]
    integrity: list[str]


class RefillReply(Reply):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    outputs: list[Packaged]
    versions: list[list[int]]
    """Per trial, the input buffers' version counters (unchanged by a refill through `.data`)."""
    integrity: list[str]


class ProbeReply(Reply):
    """One forward with the candidate's kernel calls counted and timed (custom_work.py), some outputs noised."""

    calls: dict[str, int]
    """Calls per kernel entry point."""
    host_s: dict[str, float]
    """Host seconds per entry point."""
    noised: dict[str, int] = Field(default_factory=dict)
    """Per perturbed entry point, the tensors it output that were replaced by noise."""
    torch_ops: dict[str, int] = Field(default_factory=dict)
    """Calls per dispatcher operator forward made outside its kernel calls (recorded when asked: under `strict`)."""
    kernel_ops: dict[str, int] = Field(default_factory=dict)
    """The same inside its kernel calls (an extension function's own ATen calls, where the dispatch mode sees them)."""
    forward_s: float = Field(ge=0.0)
    error: str = ""
    """The forward's exception, when it raised (an answer under noise, reported as data)."""
    outputs: dict[str, Any] | None = None
    """Packaged (or, in large-output mode, exported) outputs; None when forward raised or returned None."""
    integrity: list[str]


class PeakReply(Reply):
    peak_bytes: int | None = Field(ge=0, strict=True)
    """Peak device memory of one forward (None on the CPU)."""
    integrity: list[str] = Field(default_factory=list)


def candidate_reply(model: type[R], raw: object, what: str) -> R:
    """A reply of the candidate's worker parsed, or Stop (`worker-reply`) naming the first field wrong."""
    return parse_reply(model, raw, what, candidate=True, rule="worker-reply")


def census_reply(raw: object) -> Census:
    """The kernel census as the verdict records it (`contracts.verdict.Census`)."""
    return candidate_reply(Census, raw, "the kernel census")


def candidate_reply_stop(detail: str) -> Stop:
    """The rejection for a candidate reply that parses but does not fit the request (e.g. results for fewer trials
    than were sent)."""
    return malformed(detail, candidate=True, rule="worker-reply")
