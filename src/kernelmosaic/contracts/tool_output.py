"""What one tool call gives back: the text the model is shown and what the run records of it (the verdict, the
candidate, guidance shown)."""

from __future__ import annotations

from dataclasses import dataclass, field

from kernelmosaic.contracts.guidance import GuidanceItem
from kernelmosaic.contracts.verdict import Verdict

__all__ = ["ToolOutput"]


@dataclass
class ToolOutput:
    content: str
    """What the model is shown."""
    verdict: Verdict | None = None
    """The full verdict, when the tool ran the verifier."""
    candidate_sha256: str = ""
    source: str = ""
    """The candidate written, for write_candidate (recorded in the store)."""
    gpu_seconds: float = 0.0
    guidance: list[GuidanceItem] = field(default_factory=list)
    guidance_reason: str = ""
    format_error: bool = False
    submitted: bool = False
    """submit() accepted the best candidate: the episode ends after this result."""
