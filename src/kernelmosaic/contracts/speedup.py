"""What a *reliable speedup* is: the one definition `verify`'s output, the evaluation's rows, summary and report use.

A speedup is the baseline's median over the candidate's. Its own measurement says how far to trust it: between
the quartiles of both subjects, the ratio could lie anywhere from baseline q1 / candidate q3 to baseline q3 /
candidate q1. When that range spans more than `MAX_SPREAD` (a factor: 1.5 means the high end is 1.5x the low
end), the timings moved more than the speedup claims to measure (a loaded host, a noisy clock) and the number is
reported as unreliable, with its range, never as a headline. A speedup that was not measured is `None`, never 0.

On the CPU every time in a verdict is host time measured inside the candidate's process, which its native code
can rewrite; the verifier's own clock, around back-to-back calls of both subjects (`Timing.speedup_vs_eager_wall`),
is the figure nothing in that process moves. Where the process's speedup exceeds it by more than `WALL_AGREEMENT`,
each speedup built on the candidate's own samples is unreliable too, its slow end lowered by that factor
(`timing_speedups`). On a GPU the device time comes from CUDA events, and back-to-back calls overlap the host's
launches with the device's work, so the two measure different things; there the events are guarded by the
verifier's watch of the worker's memory instead.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from kernelmosaic.contracts.verdict import Stat, Timing

__all__ = ["MAX_SPREAD", "SpeedupReading", "WALL_AGREEMENT", "read_speedup", "timing_speedups"]

WALL_AGREEMENT = 1.25
"""How many times the verifier's own clock's speedup vs eager the candidate's process may report on the CPU and its
speedups still be measurements. Back-to-back calls run with warm caches and single timed calls after a flush, so
honest figures differ somewhat; a process that shortens its own timed calls (a rewritten clock, work moved past
the window) claims its factor over this one."""

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
    """Measured, high / low at most `MAX_SPREAD`, and (CPU) within `WALL_AGREEMENT` of the verifier's own clock."""
    wall: float | None = None
    """The verifier's own clock's speedup vs eager, where the candidate's process claimed more than
    `WALL_AGREEMENT` times it (CPU); None otherwise."""

    @property
    def measured(self) -> bool:
        return self.value is not None

    def caveat(self, digits: int = 2) -> str:
        """`unreliable: 0.91x-6.10x between quartiles` for an unreliable speedup, else ""."""
        if self.value is None or self.reliable:
            return ""
        text = f"unreliable: {self.low:.{digits}f}x-{self.high:.{digits}f}x between quartiles"
        if self.wall is not None:
            text += f" and the verifier's own clock ({self.wall:.{digits}f}x vs eager on back-to-back calls)"
        return text

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


def timing_speedups(t: Timing) -> dict[str, SpeedupReading]:
    """The four speedups of a verdict's timing (device and host time, vs eager and torch.compile), keyed as
    `GateMetrics.speedup` is, each with whether its own spread (and, on the CPU, the verifier's own clock)
    supports it."""
    readings = {"eager_device": read_speedup(t.candidate, t.eager), "compile_device": read_speedup(t.candidate, t.compile),
                "eager_host": read_speedup(t.candidate_host, t.eager_host),
                "compile_host": read_speedup(t.candidate_host, t.compile_host)}
    wall = t.speedup_vs_eager_wall
    if t.timer != "host" or wall is None or wall <= 0:
        return readings
    for measure in ("device", "host"):
        claimed = readings[f"eager_{measure}"].value
        if claimed is None or claimed <= WALL_AGREEMENT * wall:
            continue
        excess = claimed / wall  # the candidate's own samples came out this much shorter than its clock shows
        for key in (f"eager_{measure}", f"compile_{measure}"):
            r = readings[key]
            if r.value is not None:
                low = min(r.low if r.low is not None else r.value, r.value / excess)
                readings[key] = r.model_copy(update={"reliable": False, "low": low,
                                                     "high": r.high if r.high is not None else r.value, "wall": wall})
    return readings
