"""What the reference worker sends back for a problem (its set-up and its trials), typed and checked on arrival, and
`ReferenceData`, the parent's copy of it that every candidate of the problem is judged against.

The reference worker runs no candidate code, so a reply that does not parse is the problem's fault or the verifier's:
`bad_problem` naming the field (replies.malformed), never a KeyError inside a judgement.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

import torch
from pydantic import ConfigDict, Discriminator, Field, Tag, model_validator
from typing_extensions import TypedDict

from kernelmosaic.verify.replies import R, Reply, parse_reply
from kernelmosaic.verify.run_replies import Packaged

__all__ = ["RefSetup", "RefTrial", "SkippedTrial", "RefTrials", "ReferenceData", "reference_setup", "reference_trials",
           "ComparisonData", "ComparedReply", "HeldReply", "ComputedReply", "reference_reply",
           "PeaksReply", "FreeMemoryReply"]


class RefSetup(Reply):
    """The problem set up: what a candidate's `ModelNew` is constructed from."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    init_inputs: list[Any]
    """`get_init_inputs()` of the problem."""
    state_dict: dict[str, torch.Tensor]
    """The reference model's parameters and buffers at the set-up seed (copied into the candidate by name and shape)."""
    flops: float = Field(ge=0.0)
    """FLOPs of one forward as torch's counter sees them (0: not countable)."""


class SkippedTrial(Reply):
    """A trial the reference could not make: a verifier-chosen input distribution it refuses or answers with
    non-finite values (the problem's own inputs are never skipped)."""

    distribution: str
    skipped: Literal[True]
    why: str


class RefTrial(Reply):
    """One trial: its inputs and the reference's outputs."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    distribution: str
    skipped: Literal[False]
    inputs: list[Any]
    """Host tensors and plain values; in large-output mode `meta` tensors (sizes without data)."""
    outputs: Packaged
    repeat: Packaged | None = None
    """The reference's outputs of a second forward on the same inputs (absent in large-output mode)."""
    oracle: dict[str, Any] = Field(default_factory=dict)
    """The float64 oracle (`kmworker.oracle`): empty when the model could not be copied."""
    mutates_inputs: bool
    """The reference's forward writes into its inputs."""
    large: bool = False
    seed: int | None = None
    """Large-output mode: the seed the reference worker recomputes the trial from."""

    @model_validator(mode="after")
    def _seeded(self) -> RefTrial:
        if self.large and self.seed is None:
            raise ValueError("a large-output trial carries no seed")
        return self


def _kind(raw: object) -> str | None:
    skipped = raw.get("skipped") if isinstance(raw, dict) else getattr(raw, "skipped", None)
    return {True: "skipped", False: "trial"}.get(skipped) if isinstance(skipped, bool) else None


Trial = Annotated[Annotated[SkippedTrial, Tag("skipped")] | Annotated[RefTrial, Tag("trial")],
                  Discriminator(_kind, custom_error_type="skipped", custom_error_message="`skipped` is not a bool")]


class RefTrials(Reply):
    trials: list[Trial] = Field(min_length=1)
    large: bool
    """Large-output mode (`VerifyConfig.large_output_bytes`): the trials are described, not sent."""
    memory: dict[str, int] = Field(default_factory=dict)
    """The first trial's sizes: `input_bytes`, `output_bytes`, `weight_bytes`, and on CUDA `peak_bytes`."""


class _Restored(Reply):
    restored: bool


def reference_setup(raw: object, problem: str) -> tuple[bool, RefSetup | None]:
    """A `setup` reply: whether the worker restored a problem it kept set up, and the set-up (None when the worker
    sent only `restored`, because the parent said it holds the set-up already)."""
    what = f"setting up {problem}"
    restored = parse_reply(_Restored, raw, what, candidate=False).restored
    if isinstance(raw, dict) and set(raw) == {"restored"}:
        return restored, None
    return restored, parse_reply(RefSetup, raw, what, candidate=False)


def reference_trials(raw: object, problem: str) -> RefTrials:
    return parse_reply(RefTrials, raw, f"the trials of {problem}", candidate=False)


@dataclass
class ReferenceData:
    """What the reference worker produced for one problem under one config (cached across candidates)."""

    setup: RefSetup
    trials: list[SkippedTrial | RefTrial]
    env: dict[str, Any]
    large: bool = False
    """Large-output mode (`VerifyConfig.large_output_bytes`): `trials` describe the trials without their data (inputs
    and outputs as `meta` tensors, each with its `seed`); the reference worker recomputes and compares each trial in
    place (verify/large.py)."""
    memory: dict[str, int] = field(default_factory=dict)
    """The first trial's sizes in the reference worker (`RefTrials.memory`): what memory admission sizes a
    judgement from."""

    @property
    def usable(self) -> list[RefTrial]:
        """The trials a candidate is compared on (not skipped)."""
        return [t for t in self.trials if isinstance(t, RefTrial)]


class ComparisonData(TypedDict):
    """A comparison made in a worker (`kmworker.compare_core.CoreComparison.as_dict`), read by `compare.from_core`."""

    status: str
    detail: str
    max_abs: float
    max_rel: float
    budget_used: float
    reference_budget_used: float
    extra: list[float]


class ComparedReply(Reply):
    """The reference worker's comparison of outputs it mapped in place (large-output mode, kernel probes); `repeat`:
    the second forward's against the first, when one was sent."""

    comparison: ComparisonData
    repeat: ComparisonData | None = None


class HeldReply(Reply):
    """A trial recomputed and held by the reference worker (large-output mode): its inputs handed out as descriptors."""

    inputs: list[Any]
    held_seed: int
    held_bytes: int = Field(ge=0)


class ComputedReply(Reply):
    """The reference's outputs on inputs the candidate's process reported (a timed call's), with their oracle."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    outputs: Packaged
    oracle: dict[str, Any] = Field(default_factory=dict)


def reference_reply(model: type[R], raw: object, what: str) -> R:
    """A reply of the reference worker parsed, or Stop (`bad_problem`) naming the first field wrong."""
    return parse_reply(model, raw, what, candidate=False)


class PeaksReply(Reply):
    """The device's measured ceilings (`peaks`)."""

    bandwidth_gbps: float = Field(ge=0.0)
    fp32_tflops: float = Field(ge=0.0)
    bf16_tflops: float = Field(ge=0.0)


class FreeMemoryReply(Reply):
    """What the device has free now and its size (`device_memory`; None on the CPU)."""

    free_bytes: int | None = Field(ge=0)
    total_bytes: int | None = Field(ge=0)
