"""What a *reliable speedup* is: the one definition `verify`'s output, the evaluation's rows, summary and report use.

A speedup is the baseline's median over the candidate's. Its own measurement says how far to trust it: between
the quartiles of both subjects, the ratio could lie anywhere from baseline q1 / candidate q3 to baseline q3 /
candidate q1. When that range spans more than `MAX_SPREAD` (a factor: 1.5 means the high end is 1.5x the low
end), the timings moved more than the speedup claims to measure (a loaded host, a noisy clock) and the number is
reported as unreliable, with its range, never as a headline. A speedup that was not measured is `None`, never 0.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from kernelmosaic.contracts.verdict import Stat

__all__ = ["MAX_SPREAD", "SpeedupReading", "read_speedup"]

MAX_SPREAD = 1.5
"""Widest quartile range (high / low) of a speedup still reported as a measurement. Honest GPU timings have
relative IQRs of a few percent (a range of ~1.1); a CPU shared with other work can reach 0.7-2 (ranges of 5-20)."""


class SpeedupReading(BaseModel):
    """One speedup and how far its own measurement supports it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    value: float | None = None
    """Baseline median / candidate median; None when either was not measured."""
    low: float | None = None
    """Baseline q1 / candidate q3: the slow end of the quartile range."""
    high: float | None = None
    """Baseline q3 / candidate q1: the fast end."""
    reliable: bool = False
    """Measured, and high / low is at most `MAX_SPREAD`."""

    @property
    def measured(self) -> bool:
        return self.value is not None

    def caveat(self, digits: int = 2) -> str:
        """`unreliable: 0.91x-6.10x between quartiles` for an unreliable speedup, else ""."""
        if self.value is None or self.reliable:
            return ""
        return f"unreliable: {self.low:.{digits}f}x-{self.high:.{digits}f}x between quartiles"

    def describe(self, digits: int = 2) -> str:
        """`2.48x`, `unreliable: 0.91x-6.10x between quartiles (median 2.48x)` or `not measured`: an unreliable speedup
        leads with its range, so no single figure reads as the result."""
        if self.value is None:
            return "not measured"
        caveat = self.caveat(digits)
        return f"{caveat} (median {self.value:.{digits}f}x)" if caveat else f"{self.value:.{digits}f}x"


def read_speedup(candidate: Stat | None, baseline: Stat | None) -> SpeedupReading:
    """The speedup of `candidate` over `baseline` (both from one verdict's `Timing`) with its quartile range."""
    if candidate is None or baseline is None or candidate.median_ms <= 0 or baseline.median_ms <= 0:
        return SpeedupReading()
    value = baseline.median_ms / candidate.median_ms
    if candidate.q1_ms <= 0 or candidate.q3_ms <= 0 or baseline.q1_ms <= 0:
        return SpeedupReading(value=value, low=value, high=value, reliable=False)  # no spread recorded: unknown
    low, high = baseline.q1_ms / candidate.q3_ms, baseline.q3_ms / candidate.q1_ms
    return SpeedupReading(value=value, low=low, high=high, reliable=high <= MAX_SPREAD * low)
