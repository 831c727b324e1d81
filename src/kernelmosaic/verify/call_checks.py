"""Judgements on individual calls the parent did not watch: timed calls (by fingerprint), calls on buffers refilled in
place, and the wall-clock bound on reported times. Pure functions of worker replies and of what the kernel says of
the worker's threads (runclock.py); judge.py and timed.py ask the workers.
"""

from __future__ import annotations

import math
import random
from typing import Any, NamedTuple

import torch

from kernelmosaic.contracts.verdict import Finding, Status
from kernelmosaic.verify.judgement import Stop, reported_data_finding
from kernelmosaic.verify.replies import CandidateTimingReply, Print
from kernelmosaic.verify.runclock import RunClock
from kernelmosaic.verify.sandbox.kmworker.burst_inputs import MAX_OUTPUTS, SPLIT
from kernelmosaic.verify.sandbox.kmworker.fingerprint import CHUNK

__all__ = ["check_reported", "FINGERPRINT_Z", "WALL_RATIO_LIMIT", "CLOCK_RATIO_LIMIT", "MAX_BURST_CALLS", "Burst", "WallRatios",
           "WallBounds", "SELF_REPORT_LIMIT", "WAKE_MS", "outside_wait_ms", "request_allowance_ms", "request_excess_ms",
           "request_within", "pick_calls", "fingerprint_mismatch", "projection_mismatch", "burst_calls", "longer_burst", "ratios", "wall_bounds",
           "load_explains", "describe", "wall_clock_finding", "slack_ms", "burst_target_ms"]

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
clock counts as tampered with (the bound where the kernel's account of the worker is missing)."""
SELF_REPORT_LIMIT = 1.1
"""Where the kernel accounts for the worker's threads: the burst's wall time less what load held it up may exceed
the worker's own measurement of the same calls by this factor, plus eager's fixed request cost and
SELF_REPORT_SLACK_MS. Both clocks run over the same calls, so contention slows them alike and waits for a CPU are
taken out: on two cores, honest bursts of 50 ms ran 0.5-1.6 ms over their report, eager's 0.3-1.0 ms."""
SELF_REPORT_SLACK_MS = 3.0
WAKE_MS = 10.0
"""Allowance for the worker's wait for a CPU as a request arrives, beyond the most eager's own requests took in the
same attempt (`WallBounds.request_ms`). Load waits inside the calls are in both clocks; this one is in the parent's alone.
Measured on two cores with two and three busy loops per core (50 bursts of five honest candidates): requests ran
1.8-15.8 ms beyond their report; less the parent's own wait for a CPU (up to 13.5 ms, set aside), at most 6.6 ms."""
REPORT_GRAIN_MS = 0.05
"""The parent's clock starts before the worker's and stops after it, on the same monotonic clock: a burst reported
longer than that by more than this rounding was not measured by an honest clock."""


def pick_calls(calls: int, count: int) -> list[int]:
    """Indices of the calls to check, drawn after the round from the OS's entropy (the candidate knows every seed
    it was given, so no seed-derived choice is secret from it)."""
    return sorted(random.SystemRandom().sample(range(calls), min(count, calls)))


def _tolerance(ref: dict, atol: float, rtol: float, extra: float) -> float:
    a = atol + BUDGET_SLACK * extra
    var = a * a * ref["w2"] + 2 * a * rtol * ref["w2abs"] + rtol * rtol * ref["w2sq"]
    return FINGERPRINT_Z * math.sqrt(max(var, 0.0)) + 1e-12 * math.sqrt(ref["w2"] * max(ref["w2sq"], 1.0))


def fingerprint_mismatch(got: list[Print], want: list[Print], atol: float, rtol: float, extra: list[float]) -> str:
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
        if (dot := g.get("dot")) is None:
            return f"output {i}: no fingerprint reported"
        if abs(dot - w["dot"]) > tol:
            return f"output {i}: fingerprint {dot:.6g}, the reference's {w['dot']:.6g} (honest rounding moves it ≤ {tol:.3g})"
    return ""


def projection_mismatch(got: list[float], want: list[Print], atol: float, rtol: float, extra: list[float],
                        split: bool = False) -> str:
    """Why a burst call's projections `got` (one per output, `kmworker/burst_inputs.CallPrinter`) cannot be an
    honest result whose reference fingerprint is `want` ("" when they can). A NaN or inf anywhere in an output
    makes its projection non-finite; a column the call did not fill is NaN. `split`: `SPLIT` columns per output,
    its finite part's projection and its NaN, +inf and -inf counts, which must be the reference's exactly."""
    outs = want[1:]
    per = SPLIT if split else 1
    if len(got) % per:
        return f"{len(got)} split projection columns, not {SPLIT} per output"
    parts = [got[k:k + per] for k in range(0, len(got), per)]
    if len(parts) != max(min(len(outs), MAX_OUTPUTS), 1):
        return f"returned {len(parts)} output(s), expected {len(outs)}"
    tols = [_off_tolerance(w, atol, rtol, extra[i] if i < len(extra) else 0.0) if w.get("type") == "Tensor" else 0.0
            for i, w in enumerate(outs)]
    names = [f"output {i}" for i in range(len(outs))]
    if len(outs) > MAX_OUTPUTS:  # the last column sums the projections of the outputs from its own on
        last = MAX_OUTPUTS - 1
        outs, tols = [*outs[:last], _folded_print(outs[last:])], [*tols[:last], sum(tols[last:])]
        names = [*names[:last], f"outputs {last}-{len(names) - 1} (summed)"]
    for name, g, w, tol in zip(names, parts, outs, tols, strict=False):
        if w.get("type") != "Tensor":
            continue
        if split:
            counts = [w.get("nan", 0), w.get("posinf", 0), w.get("neginf", 0)]
            if g[1:] != counts:
                return f"{name}: NaN/+inf/-inf counts {[_count(c) for c in g[1:]]}, the reference's {counts}"
        elif w.get("nan") or w.get("posinf") or w.get("neginf"):
            if math.isfinite(g[0]):
                return f"{name}: a finite projection ({g[0]:.6g}) where the reference's output holds NaN or inf"
            continue
        if why := _projection_off(name, g[0], w, tol):
            return why
    return ""


def _folded_print(outs: list[Print]) -> Print:
    """The reference's prints of the outputs a burst row sums into its last column (`CallPrinter`), as one print:
    their dots, NaN and inf counts summed. Values that are no tensor count nothing, as the candidate's side adds
    nothing for them."""
    tensors = [w for w in outs if w.get("type") == "Tensor"]
    if not tensors:
        return {"type": "none"}
    return {"type": "Tensor", "dot": math.fsum(w["dot"] for w in tensors), "nan": sum(w.get("nan", 0) for w in tensors),
            "posinf": sum(w.get("posinf", 0) for w in tensors), "neginf": sum(w.get("neginf", 0) for w in tensors)}


def _off_tolerance(w: Print, atol: float, rtol: float, extra: float) -> float:
    """How far honest rounding moves output print `w`'s burst projection: the fingerprint's own tolerance and, for a
    floating output, the projection's float32 rounding (each product and a running sum over up to CHUNK terms)."""
    is_float = w["dtype"].startswith(("float", "bfloat", "complex"))
    tol = _tolerance(w, atol, rtol, extra) if is_float else _tolerance(w, 0, 0, 0)
    if is_float:
        tol += FINGERPRINT_Z * 2.0 ** -24 * math.sqrt(min(math.prod(w.get("shape") or [1]), CHUNK) * w["w2sq"])
    return tol


def _count(c: float) -> int | float:
    return int(c) if math.isfinite(c) else c


def _projection_off(name: str, g: float, w: Print, tol: float) -> str:
    """Why projection `g` of `name` cannot be an honest one of the reference's `w` within `tol` ("" when it can)."""
    if not math.isfinite(g):
        return f"{name}: projection {g} (NaN or inf, or no output), the reference's {w['dot']:.6g}"
    if abs(g - w["dot"]) > tol:
        return f"{name}: projection {g:.6g}, the reference's {w['dot']:.6g} (honest rounding moves it ≤ {tol:.3g})"
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
    run: RunClock | None = None
    """The kernel's account of the worker's threads over the request; None where /proc cannot give it."""
    print_ms: float = 0.0
    """One call's projection inside the burst (`kmworker/burst_inputs.CallPrinter`), as the reference measured it
    alone on an output of the problem's shapes: time the burst spends on the verifier's work, not the calls."""

    @property
    def prints_ms(self) -> float:
        """The whole burst's projections by the reference's measure."""
        return self.calls * self.print_ms

    @property
    def per_call_ms(self) -> float:
        """One call's share of the burst by the parent's clock: the wall time less what load held the request up
        and less the projections (the reference's measure), over the calls."""
        return max(self.free_wall_ms - self.prints_ms, 0.0) / max(self.calls, 1)

    @property
    def free_wall_ms(self) -> float:
        """The parent's wall time less what the machine's load held the request up (the worker's main thread and
        the parent's thread waiting for a CPU); the wall time itself where the kernel's account is missing."""
        return max(self.wall_ms - self.run.load_ms, 0.0) if self.run is not None else self.wall_ms

    @property
    def free_wall_all_ms(self) -> float:
        """The same less every worker thread's wait (`RunClock.all_load_ms`): the bound on calls × their reported
        median, which a parallel loop's helpers held up by load would otherwise break."""
        return max(self.wall_ms - self.run.all_load_ms, 0.0) if self.run is not None else self.wall_ms


class WallRatios(NamedTuple):
    clock: float
    """Parent's wall time of the burst over the worker's own measurement of it: ~1 unless its clock runs slow
    (or the machine is loaded: the parent's wall holds the time other work had the CPU)."""
    cold: float
    """The same wall time over calls × the reported host-inclusive median: warm back-to-back calls against what
    single cold calls were reported to cost (≤ ~1 for honest subjects; the baseline shows how far below)."""
    cpu: float = 0.0
    """The worker's busiest thread's run + run-queue wait over the worker's measurement: ~1 or below for an honest
    clock at any load (0 where the kernel's account is missing)."""


def ratios(b: Burst) -> WallRatios:
    cpu = round(b.run.busiest_runnable_ms / max(b.reported_ms, 1e-6), 3) if b.run is not None else 0.0
    return WallRatios(round(b.wall_ms / max(b.reported_ms, 1e-6), 3),
                      round(max(b.wall_ms - b.prints_ms, 0.0) / max(b.calls * b.host_median_ms, 1e-6), 3), cpu)


def slack_ms(baseline: Burst) -> float:
    """The additive slack of the bound: a request's fixed cost (messages, bookkeeping), taken as twice the
    baseline's wall time beyond its own report, less the time load held it up, plus SLACK_MS."""
    return SLACK_MS + 2 * max(baseline.free_wall_ms - baseline.reported_ms, 0.0)


def burst_target_ms(configured_ms: float, baseline: Burst, attempt: int = 0) -> float:
    """How long the candidate's burst should run: long enough that a clock slowed by a factor of a few shows above
    the additive slack (a fixed cost cannot hide a cost that grows with the burst), at most 2 s. The configured
    length already outweighs SLACK_MS; what a slow request adds on top is what scales it. Each attempt after a
    failed one runs 4 times longer: what load adds to a request (waking for it, replying) stays the same while a
    slowed clock's excess grows with the burst."""
    return min(max(configured_ms, 4 * (slack_ms(baseline) - SLACK_MS)) * 4 ** attempt, 2000.0)


class WallBounds(NamedTuple):
    clock_ms: float
    """CLOCK_RATIO_LIMIT × the worker's report, plus the slack."""
    cold_ms: float
    """The cold limit × calls × the reported median, plus the slack."""
    cold_limit: float
    slack_ms: float
    report_ms: float | None = None
    """SELF_REPORT_LIMIT × the worker's report plus eager's fixed request cost and SELF_REPORT_SLACK_MS: the bound
    on the wall time less load (None where the kernel's account of either worker is missing)."""
    runnable_ms: float | None = None
    """SELF_REPORT_LIMIT × the worker's report plus eager's own runnable time beyond its report and
    SELF_REPORT_SLACK_MS: the bound on the busiest worker thread's run + wait (None without the kernel's account)."""
    request_ms: float | None = None
    """SELF_REPORT_LIMIT × the worker's report plus the most any of eager's requests in the attempt took beyond its
    own report (the parent's own waits for a CPU set aside) and WAKE_MS: the bound on the burst's wall time less the
    parent's waits (None without the kernel's account)."""
    cold_run_ms: float = math.inf
    """The call-time bound on the busiest thread's time on a CPU: the cold limit, or eager's own on-CPU time over
    what its cold calls predict when larger (threads of a parallel loop spin on a CPU while they wait for one
    another, more so on a loaded host), × calls × the reported median, plus the slack."""


def outside_wait_ms(*eager: Burst) -> float | None:
    """How long eager's busiest thread wanted a CPU beyond its own report, the most of the given bursts: waking for
    the request and replying, which load stretches and no report holds (None without the kernel's account)."""
    excess = [b.run.busiest_runnable_ms - b.reported_ms for b in eager if b.run is not None]
    return max(max(excess), 0.0) if excess and len(excess) == len(eager) else None


def request_excess_ms(b: Burst) -> float | None:
    """How long the parent's clock ran beyond the worker's report of a burst, less the parent's own waits for a CPU
    (all outside the calls: it sleeps while they run): the request's cost around the calls, which load stretches
    only by the worker's wait to wake. A clock slowed k times adds (k - 1) × the report here at any load, since the
    worker's waits inside the calls are in both clocks (None without the kernel's account)."""
    return b.wall_ms - b.reported_ms - b.run.parent_wait_ms if b.run is not None else None


def request_allowance_ms(*eager: Burst) -> float | None:
    """The most eager's requests took beyond their reports (`request_excess_ms`), at least 0; None where the
    kernel's account of any of them is missing."""
    excess = [e for b in eager if (e := request_excess_ms(b)) is not None]
    return max(max(excess), 0.0) if excess and len(excess) == len(eager) else None


def wall_bounds(subject: Burst, baseline: Burst, outside_ms: float | None = None,
                eager_request_ms: float | None = None) -> WallBounds:
    slack = slack_ms(baseline)
    warm_over_cold = max(baseline.reported_ms - baseline.prints_ms, 0.0) / max(baseline.calls * baseline.host_median_ms, 1e-6)
    cold_limit = WALL_RATIO_LIMIT * max(warm_over_cold, 1.0)
    report = runnable = request = None
    if subject.run is not None and baseline.run is not None:
        overhead = max(baseline.free_wall_ms - baseline.reported_ms, 0.0)
        report = SELF_REPORT_LIMIT * subject.reported_ms + overhead + SELF_REPORT_SLACK_MS
        outside = outside_ms if outside_ms is not None else outside_wait_ms(baseline)
        runnable = SELF_REPORT_LIMIT * subject.reported_ms + (outside or 0.0) + SELF_REPORT_SLACK_MS
        allowance = eager_request_ms if eager_request_ms is not None else request_allowance_ms(baseline)
        request = SELF_REPORT_LIMIT * subject.reported_ms + (allowance or 0.0) + WAKE_MS
    cold_run_limit = cold_limit
    if baseline.run is not None:
        eager_run = max(baseline.run.busiest_run_ms - baseline.prints_ms, 0.0) / max(baseline.calls * baseline.host_median_ms, 1e-6)
        cold_run_limit = max(cold_limit, WALL_RATIO_LIMIT * eager_run)
    predicted = subject.calls * subject.host_median_ms
    prints = subject.prints_ms  # the verifier's own work in the burst, by the reference's measure: set aside
    return WallBounds(CLOCK_RATIO_LIMIT * subject.reported_ms + slack, cold_limit * predicted + prints + slack,
                      cold_limit, slack, report, runnable, request, cold_run_limit * predicted + prints + slack)


def request_within(subject: Burst, bounds: WallBounds) -> bool:
    """The burst's wall time less the parent's waits for a CPU within `WallBounds.request_ms` (True where either
    is missing)."""
    excess = request_excess_ms(subject)
    return excess is None or bounds.request_ms is None or subject.reported_ms + excess <= bounds.request_ms


def load_explains(subject: Burst, bounds: WallBounds) -> bool:
    """Whether the kernel's account of the worker clears a burst whose wall time broke a bound: no thread of the
    worker wanted a CPU for longer than the bound allows the report (a slowed clock shows here at any load, since a
    CPU-bound thread's run + wait is its wall time), none ran longer than the reported call times allow, and the wall
    time less what load held the request up is within the bounds (the clock bound less the main thread's and the
    parent's waits, the call-time bound less every worker thread's too). Work done where the account cannot see it (a
    thread or process that ended within the burst, a thread asleep on the device) is cleared only by the last."""
    run = subject.run
    if run is None:
        return False
    return (run.busiest_runnable_ms <= bounds.clock_ms and run.busiest_run_ms <= bounds.cold_run_ms
            and subject.free_wall_ms <= bounds.clock_ms and subject.free_wall_all_ms <= bounds.cold_ms)


def describe(subject: Burst, bounds: WallBounds) -> str:
    """The evidence of one burst: both clocks, the kernel's account, the bounds."""
    r = ratios(subject)
    text = (f"burst of {subject.calls} calls: {subject.wall_ms:.1f} ms on the parent's clock, {subject.reported_ms:.1f} "
            f"ms on the worker's (ratio {r.clock:.2f}, limit {CLOCK_RATIO_LIMIT}); {r.cold:.2f}x what the reported "
            f"call time predicts (limit {bounds.cold_limit:.2f}); slack {bounds.slack_ms:.1f} ms")
    run = subject.run
    if run is None:
        return text + "; no run-time account of the worker (/proc schedstat unreadable)"
    if bounds.report_ms is not None and bounds.runnable_ms is not None and subject.run is not None:
        text += (f"; wall less load {subject.free_wall_ms:.1f} ms and busiest thread runnable "
                 f"{subject.run.busiest_runnable_ms:.1f} ms against the report's bounds {bounds.report_ms:.1f} ms and "
                 f"{bounds.runnable_ms:.1f} ms ({SELF_REPORT_LIMIT}x the report + eager's request cost, or eager's "
                 f"runnable time beyond its report, + {SELF_REPORT_SLACK_MS:.0f} ms)")
    if bounds.request_ms is not None and (excess := request_excess_ms(subject)) is not None:
        text += (f"; wall less the parent's waits {subject.reported_ms + excess:.1f} ms against "
                 f"{bounds.request_ms:.1f} ms ({SELF_REPORT_LIMIT}x the report + eager's requests beyond theirs + "
                 f"{WAKE_MS:.0f} ms)")
    return (text + f"; kernel's account: busiest worker thread runnable {run.busiest_runnable_ms:.1f} ms (on a CPU "
            f"{run.busiest_run_ms:.1f} ms), load held the request {run.load_ms:.1f} ms (worker "
            f"{run.main_wait_ms:.1f}, parent {run.parent_wait_ms:.1f}, all worker threads {run.threads_wait_ms:.1f}), wall less "
            f"load {subject.free_wall_ms:.1f} ms ({subject.free_wall_all_ms:.1f} ms less every thread's wait)")


def wall_clock_finding(subject: Burst, baseline: Burst, outside_ms: float | None = None,
                       eager_request_ms: float | None = None) -> Finding | None:
    """A finding when the candidate's burst took far longer on the parent's clock than its worker reported, or than
    its reported single-call time predicts beyond what the eager baseline's own clock shows for the same ratio, and
    the kernel's account of the worker's threads does not put the difference down to load (`load_explains`); and,
    where the kernel accounts for both workers, whenever the wall time less load exceeds the report by more than
    SELF_REPORT_LIMIT and eager's own request cost (a clock slowed 1.3x is caught there, one slowed 3x only by
    the bounds above with bursts of 50 ms), the busiest thread's run + wait exceeds it by more than eager's runnable
    time beyond its report, or the wall time less the parent's waits exceeds it by more than eager's requests took
    beyond theirs and WAKE_MS (`request_within`: the check that holds at any load, where a slowed clock's report
    can match the wall time less load and, with the work on several threads, the busiest thread's)."""
    if subject.reported_ms > subject.wall_ms + REPORT_GRAIN_MS:
        return Finding(rule="timing-wall-clock", severity="reject",
                       message="the candidate's worker reported its burst taking longer than the verifier's own clock "
                               "saw pass around the whole request: the worker's clock or its reply was tampered with",
                       evidence=f"burst of {subject.calls} calls: {subject.reported_ms:.3f} ms reported, "
                                f"{subject.wall_ms:.3f} ms on the parent's clock")
    bounds = wall_bounds(subject, baseline, outside_ms, eager_request_ms)
    close = bounds.report_ms is None or (subject.free_wall_ms <= bounds.report_ms
                                         and subject.run is not None and bounds.runnable_ms is not None
                                         and subject.run.busiest_runnable_ms <= bounds.runnable_ms
                                         and request_within(subject, bounds))
    if close and subject.wall_ms <= bounds.clock_ms and subject.wall_ms <= bounds.cold_ms:
        return None
    if close and load_explains(subject, bounds):
        return None
    return Finding(rule="timing-wall-clock", severity="reject",
                   message="the candidate's calls took far longer on the verifier's own clock, and in the kernel's "
                           "account of its worker's threads, than its process reported: its clock or timer was "
                           "tampered with (a candidate that leaves the worker's clock and timer alone is accepted)",
                   evidence=describe(subject, bounds))


def check_reported(res: CandidateTimingReply, seed: int, given: list[Any]) -> None:
    """A timing reply's own account of its calls against what the parent asked: call i drew its inputs from seed
    `seed + i`, and the call copied in full has the problem's input shapes and dtypes (`given`: a trial's inputs).
    Raises Stop (`candidate-reported-inputs`) when it differs: forward changed its inputs, or the reply lies."""
    seeds = [c.seed for c in res.calls]
    if seeds != list(range(seed, seed + len(seeds))):
        wrong = next(i for i, s in enumerate(seeds) if s != seed + i)
        detail = f"call {wrong + 1} of the round reports seed {seeds[wrong]}; it was given {seed + wrong}"
        raise Stop(Status.runtime_error, f"the timing reply misreports its calls: {detail}", [reported_data_finding(detail)])
    reported = res.checked_inputs
    if isinstance(reported, dict):  # named by seed (large-output mode): the reference redraws them
        return
    for k, (got, want) in enumerate(zip(reported, given, strict=False)):
        if isinstance(want, torch.Tensor) and (not isinstance(got, torch.Tensor) or got.shape != want.shape
                                                or got.dtype != want.dtype):
            what = f"{tuple(got.shape)} {got.dtype}" if isinstance(got, torch.Tensor) else type(got).__name__
            detail = f"input {k} of the timed call checked in full is {what} after forward; the problem's is " \
                     f"{tuple(want.shape)} {want.dtype}"
            raise Stop(Status.runtime_error, f"forward changed its inputs during timing: {detail}",
                       [reported_data_finding(detail)])
    if len(reported) != len(given):
        detail = f"the timed call checked in full reports {len(reported)} inputs; the problem has {len(given)}"
        raise Stop(Status.runtime_error, f"forward changed its inputs during timing: {detail}", [reported_data_finding(detail)])
