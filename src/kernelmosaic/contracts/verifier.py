"""What the agent and evaluation judge with: the `Verifier` protocol. `verify.Verifier` is the implementation (its
workers, pools and timing); the Ray judges (`verify/ray`) and evaluation's wrapper (`evaluate.harness.EvalVerifier`)
answer the same calls, so the stages above depend on this shape, not on a class of the verifier."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from kernelmosaic.contracts.results import CompileResult, DevicePeaks, ProfileReport
from kernelmosaic.contracts.verdict import Verdict

__all__ = ["Verifier"]


class Verifier(Protocol):
    def verify(self, problem: Path, candidate: Path, *, timing: bool | None = None, sanitize: bool | None = None,
               **options: Any) -> Verdict:
        """Judge `candidate` against `problem`. `timing` and `sanitize` override the configuration for this call;
        `options`: the implementation's further settings for one call (`policy`, `alternatives`, `timing_profile`)."""
        ...

    def compile(self, candidate: Path) -> CompileResult:
        """Build the candidate's extensions only."""
        ...

    def profile(self, problem: Path, candidate: Path) -> ProfileReport:
        """Which kernels ran and, where a profiler works, a per-kernel metric digest."""
        ...

    def device_peaks(self) -> DevicePeaks:
        """Measured ceilings of the device (copy bandwidth, matrix rates)."""
        ...
