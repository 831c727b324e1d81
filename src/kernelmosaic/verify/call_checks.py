"""Judgements on individual calls the parent did not watch: timed calls (by fingerprint), calls on buffers refilled in
place, and the wall-clock bound on reported times. Pure functions of worker replies; judge.py asks the workers.
"""

from __future__ import annotations

import math
import random
from typing import NamedTuple

from kernelmosaic.verify.verdict import Finding

__all__ = ["FINGERPRINT_Z", "WALL_RATIO_LIMIT", "CLOCK_RATIO_LIMIT", "MAX_BURST_CALLS", "Burst", "WallRatios",
           "pick_calls", "fingerprint_mismatch", "burst_calls", "longer_burst", "ratios", "wall_clock_finding",
           "slack_ms", "burst_target_ms"]

FINGERPRINT_Z = 8.0
"""Honest rounding moves a fingerprint (a Gaussian-weighted sum) by at most sqrt(Σ w_i² b_i²) standard deviations,
b_i being element i's budget; a stale or skipped output moves it by about sqrt(Σ w_i² e_i²) with e_i ~ the output
itself. 8 standard deviations: no honest output is near it, no stale one is within it."""
BUDGET_SLACK = 4.0
"""Timed inputs are fresh draws like the trials' own; their budget is taken as this multiple of the largest the
trials needed above atol + rtol·|r|."""
WALL_RATIO_LIMIT = 3.0
"""A candidate whose burst took this many times longer than its reported host-inclusive time predicts (relative
to the eager baseline's same ratio, itself at least 1) reported times its own process did not spend."""
SLACK_MS = 20.0
"""Fixed allowance for a burst request beyond its calls: a message each way and a host busy with other work."""
CLOCK_RATIO_LIMIT = 2.0
"""The parent's clock may run this many times faster than the worker's over the same burst before the worker's
clock counts as tampered with."""


def pick_calls(calls: int, count: int) -> list[int]:
    """Indices of the calls to check, drawn after the round from the OS's entropy (the candidate knows every seed
    it was given, so no seed-derived choice is secret from it)."""
    return sorted(random.SystemRandom().sample(range(calls), min(count, calls)))


def _tolerance(ref: dict, atol: float, rtol: float, extra: float) -> float:
    a = atol + BUDGET_SLACK * extra
    var = a * a * ref["w2"] + 2 * a * rtol * ref["w2abs"] + rtol * rtol * ref["w2sq"]
    return FINGERPRINT_Z * math.sqrt(max(var, 0.0)) + 1e-12 * math.sqrt(ref["w2"] * max(ref["w2sq"], 1.0))


def fingerprint_mismatch(got: list[dict], want: list[dict], atol: float, rtol: float, extra: list[float]) -> str:
    """Why the candidate's fingerprint `got` cannot be an honest result whose reference fingerprint is `want`
    ("" when it can). `extra`: per output, the budget the trials needed above atol + rtol·|r|."""
    if len(got) != len(want) or got[0] != want[0]:
        return f"returned {len(got) - 1} output(s), expected {len(want) - 1}"
    for i, (g, w) in enumerate(zip(got[1:], want[1:], strict=True)):
        for key in ("type", "shape", "dtype", "nan", "posinf", "neginf"):
            if g.get(key) != w.get(key):
                return f"output {i}: {key} {g.get(key)!r}, expected {w.get(key)!r}"
        if w.get("type") != "Tensor":
            continue
        is_float = w["dtype"].startswith(("float", "bfloat", "complex"))
        tol = _tolerance(w, atol, rtol, extra[i] if i < len(extra) else 0.0) if is_float else _tolerance(w, 0, 0, 0)
        if abs(g["dot"] - w["dot"]) > tol:
            return f"output {i}: fingerprint {g['dot']:.6g}, the reference's {w['dot']:.6g} (honest rounding moves it ≤ {tol:.3g})"
    return ""


MAX_BURST_CALLS = 200_000


def burst_calls(target_ms: float, host_median_ms: float) -> int:
    """How many back-to-back calls should take `target_ms` if the reported host-inclusive median is true."""
    return int(min(max(math.ceil(target_ms / max(host_median_ms, 1e-4)), 3), MAX_BURST_CALLS))


def longer_burst(b: Burst, target_ms: float) -> int:
    """Calls for another burst when `b` ran shorter than `target_ms` on the parent's own clock; 0 when it did not.
    The calls were sized from reported cold-call times, but warm back-to-back calls can cost far less (CI, 2026-12-01:
    a 10x slowed clock's burst ran ~30 ms, within the bound's additive slack), so the parent resizes from its clock."""
    if b.wall_ms >= target_ms or b.calls >= MAX_BURST_CALLS:
        return 0
    return int(min(math.ceil(1.25 * b.calls * target_ms / max(b.wall_ms, 1e-3)), MAX_BURST_CALLS))


class Burst(NamedTuple):
    wall_ms: float
    """The parent's own clock around the burst request."""
    reported_ms: float
    """The worker's clock around the same calls."""
    calls: int
    host_median_ms: float
    """The subject's reported host-inclusive median (cold calls) that chose `calls`."""


class WallRatios(NamedTuple):
    clock: float
    """Parent's wall time of the burst over the worker's own measurement of it: ~1 unless its clock runs slow."""
    cold: float
    """The same wall time over calls × the reported host-inclusive median: warm back-to-back calls against what
    single cold calls were reported to cost (≤ ~1 for honest subjects; the baseline shows how far below)."""


def ratios(b: Burst) -> WallRatios:
    return WallRatios(round(b.wall_ms / max(b.reported_ms, 1e-6), 3),
                      round(b.wall_ms / max(b.calls * b.host_median_ms, 1e-6), 3))


def slack_ms(baseline: Burst) -> float:
    """The additive slack of the bound: a request's fixed cost (messages, bookkeeping, a busy host), taken as twice
    the baseline's wall time beyond its own report, plus SLACK_MS."""
    return SLACK_MS + 2 * max(baseline.wall_ms - baseline.reported_ms, 0.0)


def burst_target_ms(configured_ms: float, baseline: Burst) -> float:
    """How long the candidate's burst should run: long enough that a clock slowed by a factor of a few shows above
    the additive slack however busy the host is (a fixed cost cannot hide a cost that grows with the burst), at
    most 2 s. The configured length already outweighs SLACK_MS; what the host's load adds on top is what scales it."""
    return min(max(configured_ms, 4 * (slack_ms(baseline) - SLACK_MS)), 2000.0)


def wall_clock_finding(subject: Burst, baseline: Burst) -> Finding | None:
    """A finding when the candidate's burst took far longer on the parent's clock than its worker reported, or than
    its reported single-call time predicts beyond what the eager baseline's own clock shows for the same ratio.
    Both bounds carry an additive slack: the request's fixed cost (messages, bookkeeping, a busy host), taken
    as twice the baseline's wall time beyond its own report plus SLACK_MS."""
    slack = slack_ms(baseline)
    warm_over_cold = baseline.reported_ms / max(baseline.calls * baseline.host_median_ms, 1e-6)
    cold_limit = WALL_RATIO_LIMIT * max(warm_over_cold, 1.0)
    clock_ok = subject.wall_ms <= CLOCK_RATIO_LIMIT * subject.reported_ms + slack
    cold_ok = subject.wall_ms <= cold_limit * subject.calls * subject.host_median_ms + slack
    if clock_ok and cold_ok:
        return None
    r = ratios(subject)
    return Finding(rule="timing-wall-clock", severity="reject",
                   message="the candidate's calls took far longer on the verifier's own clock than its process "
                           "reported: its clock or timer was tampered with",
                   evidence=f"burst of {subject.calls} calls: {subject.wall_ms:.1f} ms on the parent's clock, "
                            f"{subject.reported_ms:.1f} ms on the worker's (ratio {r.clock:.2f}, limit "
                            f"{CLOCK_RATIO_LIMIT}); {r.cold:.2f}x what the reported call time predicts (limit "
                            f"{cold_limit:.2f}); slack {slack:.1f} ms")
