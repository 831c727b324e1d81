"""The timing phase of one verdict: the problem's `torch.compile` baseline (cached, `baseline_run.py`), rounds of
candidate and eager timing with the device held alone, then every round's timed calls checked (a random subset by
fingerprint, one in full, and calls picked from each wall-clock burst by fingerprint), and the parent's wall-clock bound.
In large-output mode the call checked in full is checked right after its round, in the reference worker, from a copy
the candidate keeps on its device (`large.compare_timed_call`): one round's copy alive at a time, none sent whole.

Two figures per subject: device time (the lead kernel hides the host's launch cost) and host-inclusive call time
(calls on an idle device, as KernelBench times them). Runs in the trusted parent; the workers only report.
"""

from __future__ import annotations

import contextlib
import random
import statistics
import time
from collections.abc import Iterator
from typing import NamedTuple

import torch

from kernelmosaic.contracts.verdict import Finding, Status, Timing
from kernelmosaic.verify.baseline_run import ROUND_SEEDS, Hold, compile_baseline
from kernelmosaic.verify.binary_check import own_builds
from kernelmosaic.verify.call_checks import (
    Burst,
    WallRatios,
    burst_calls,
    burst_target_ms,
    check_reported,
    fingerprint_mismatch,
    longer_burst,
    outside_wait_ms,
    pick_calls,
    projection_mismatch,
    ratios,
    request_allowance_ms,
    wall_clock_finding,
)
from kernelmosaic.verify.config import VerifyConfig
from kernelmosaic.verify.cpu_samples import CpuSampler, library_time_finding
from kernelmosaic.verify.custom_work import judge_torch_ops, records_ops
from kernelmosaic.verify.freeze import Held, held_still
from kernelmosaic.verify.judgement import (
    Exclusive,
    Outcome,
    Stop,
    call,
    call_on_candidate_data,
    escaped_work,
    integrity,
)
from kernelmosaic.verify.large import compare_timed_call
from kernelmosaic.verify.pool import Worker
from kernelmosaic.verify.reference_data import ReferenceData, reference_reply
from kernelmosaic.verify.replies import (
    BurstCheckReply,
    BurstInputsReply,
    BurstReply,
    CandidateTimingReply,
    ChangedReply,
    ChecksReply,
    Print,
    PrintCostReply,
    burst_reply,
    candidate_timing_reply,
    malformed,
    timing_reply,
)
from kernelmosaic.verify.run_replies import candidate_reply
from kernelmosaic.verify.runclock import run_clock, snapshot
from kernelmosaic.verify.sandbox.kmworker.burst_inputs import MAX_OUTPUTS, SPLIT
from kernelmosaic.verify.sandbox.kmworker.timing import BURST_SETS, LARGE_BURST_SETS
from kernelmosaic.verify.stats import summarize

__all__ = ["time_candidate"]

def _check_full(mine: CandidateTimingReply, ref: Worker, config: VerifyConfig, r: int, cand: Worker | None = None,
                mutates: bool = False) -> None:
    """The round's timed call copied in full, against the reference, and (unless the reference's forward `mutates`
    its inputs) its inputs as forward left them against their draw from the call's seed: a forward that writes its
    result into its input only in timed calls gives an idempotent op's right result there (red team 13). `cand`
    (large-output mode, right after the round's timing reply): the copy stayed on the candidate's device and is
    compared in the reference worker (`large.compare_timed_call`)."""
    cmp = compare_timed_call(ref, mine.checked_inputs, mine.checked_outputs, config, cand)  # large outputs: compared in the reference worker
    if not cmp.ok:
        raise Stop(cmp.status, f"a timed call of round {r} returned a wrong result (stale or cached output?): {cmp.detail}",
                   [Finding(rule="timed-output-check", severity="reject",
                            message="outputs of timed calls must be right too", evidence=cmp.detail)])
    if not mutates and isinstance(mine.checked_inputs, list):  # large-output mode: named by seed, never sent back
        what = "a timed call's inputs against their draw"
        changed = reference_reply(ChangedReply, call_on_candidate_data(
            ref, "inputs_changed", config.run_timeout_s, what, seed=mine.checked_seed, inputs=mine.checked_inputs),
            what).changed
        if changed:  # the correctness runs, which a candidate can tell from timed calls, saw none of it
            detail = f"inputs {changed} of the timed call checked in full (round {r}) differ from what it was given"
            raise Stop(Status.integrity_violation, f"forward modified its input(s) {changed} during timing; the "
                       "reference does not", [Finding(rule="input-mutation", severity="reject",
                                                      message="the candidate wrote into its inputs", evidence=detail)])


def _check_round(mine: CandidateTimingReply, ref: Worker, config: VerifyConfig, fp_seed: int, extra: list[float], r: int,
                 full: bool = True, mutates: bool = False) -> int:
    """Check one round's timed calls: the one copied in full (unless `full` is False: large-output mode checked it
    right after the round), and a random subset by fingerprint. Returns how many calls were checked (the full one
    counted either way)."""
    atol, rtol = config.tolerances()
    if full:
        _check_full(mine, ref, config, r, mutates=mutates)
    calls = mine.calls
    picked = pick_calls(len(calls), config.timed_checks)
    want = _reference_prints(ref, config, "reference on timed inputs", [calls[i].seed for i in picked], fp_seed)
    for i, w in zip(picked, want, strict=True):  # the seeds are the ones asked (check_reported)
        if why := fingerprint_mismatch(calls[i].fp, w, atol, rtol, extra):
            detail = f"call {i + 1} of {len(calls)} in round {r}: {why}"
            raise Stop(Status.output_mismatch, f"a timed call returned a wrong result (skipped, stale or cached work): {detail}",
                       [Finding(rule="timed-output-fingerprint", severity="reject",
                                message="every timed call must compute its own inputs' result", evidence=detail)])
    return len(picked) + 1


def _reference_prints(ref: Worker, config: VerifyConfig, what: str, seeds: list[int], fp_seed: int) -> list[list[Print]]:
    """The reference's fingerprints of the calls whose inputs were drawn from `seeds`, one per seed."""
    got = reference_reply(ChecksReply, call(ref, "check_calls", config.run_timeout_s, Status.bad_problem, what,
                                            seeds=seeds, fp_seed=fp_seed), what).prints
    if len(got) != len(seeds):
        raise Stop(Status.bad_problem, f"the reference worker sent {len(got)} fingerprints for {len(seeds)} calls ({what})")
    return got


BURST_PICKS = 16
"""Calls of each candidate burst checked by their projection, picked after its reply; its last call is one more."""


class BurstCheck(NamedTuple):
    """A candidate burst's calls to check after the rounds: the burst's seed and sets (its inputs follow from them),
    its length, and the projections the candidate gave the calls picked (after its reply, from the OS's entropy)."""
    seed: int
    sets: int
    calls: int
    got: dict[int, list[float]]
    split: bool = False
    """Each output's projection split into its finite part and NaN/inf counts (`CallPrinter`)."""


def _picked(reply: BurstReply, seed: int, sets: int, calls: int, split: bool = False) -> BurstCheck:
    """The calls of a candidate burst to check, and what it said of them; a reply whose projections are not one
    float64 row per call is a timing reply the worker's code never sends."""
    rows = reply.prints
    per = SPLIT if split else 1
    if (not isinstance(rows, torch.Tensor) or rows.dtype != torch.float64 or rows.device.type != "cpu"
            or rows.dim() != 2 or rows.shape[0] != calls or not per <= rows.shape[1] <= per * MAX_OUTPUTS
            or rows.shape[1] % per):
        shape = tuple(rows.shape) if isinstance(rows, torch.Tensor) else type(rows).__name__
        raise malformed(f"the wall-clock burst: prints: {calls} rows of float64 projections expected, got {shape}",
                        candidate=True)
    picked = set(pick_calls(calls, BURST_PICKS)) | {calls - 1}
    return BurstCheck(seed, sets, calls, {k: rows[k].tolist() for k in sorted(picked)}, split)


def _burst(worker: Worker, config: VerifyConfig, host_median_ms: float, seed: int, target_ms: float, fp_seed: int,
           resize: bool = False, prints: list[BurstCheck] | None = None, sets: int = BURST_SETS,
           print_ms: float = 0.0, give_back: bool = False, sampled: list[Finding | None] | None = None,
           split: bool = False, **kind) -> tuple[Burst, bool]:
    """`resize`: run the burst again, longer, until it lasts `target_ms` on this process's clock (at most twice).
    `prints`: the candidate's; the calls of the burst that counts (the last run) picked for `_check_bursts` once its
    reply is in, and what it changed in the verifier checked in a request of its own (so the timed request holds
    the calls alone, as eager's does). The kernel's account of the worker's threads is read from /proc around the
    timed request (runclock.py). `sets`: draws the burst's positional arguments rotate through
    (`timing.LARGE_BURST_SETS` in large-output mode); the candidate lets its inputs go after its last burst
    (eager's go after each). `print_ms`: the reference's measure of one call's projection. `give_back`: the
    reference's allocator returns its cached blocks after the burst (`_give_back`). `sampled`: the kernel samples
    the worker's threads through the burst that counts, and what they show is appended (`cpu_samples`). Returns
    the burst and,
    from the reference only, whether its calls had inputs of their own (`BurstInputs.distinct`)."""
    status = Status.bad_problem if kind else Status.runtime_error
    what = "drawing the burst's inputs"
    drawn = call(worker, "burst_inputs", config.timing_timeout_s, status, what, seed=seed, sets=sets)
    distinct = bool(kind) and reference_reply(BurstInputsReply, drawn, what).distinct
    calls = burst_calls(target_ms, host_median_ms)
    pid = worker.pid
    check: BurstCheck | None = None
    for _ in range(3 if resize else 1):
        before = snapshot(pid)
        with CpuSampler(pid) if sampled is not None else contextlib.nullcontext() as sampler:
            t0 = time.perf_counter()
            res = call(worker, "burst", config.timing_timeout_s, status, "the wall-clock burst", calls=calls,
                       fp_seed=fp_seed, split=split, **kind)
            wall_ms = (time.perf_counter() - t0) * 1e3
        run = run_clock(pid, before, snapshot(pid))
        reply = burst_reply(res, "the wall-clock burst", candidate=not kind)
        if prints is not None:
            check = _picked(reply, seed, sets, calls, split)
            done = candidate_reply(BurstCheckReply, call(worker, "burst_check", config.timing_timeout_s, status,
                                                         "checking the burst left the verifier alone"), "burst_check")
            integrity(done.integrity, "timing")
        burst = Burst(wall_ms, reply.reported_ms, calls, host_median_ms, run, print_ms)
        counted = (sampler, calls)
        if not (calls := longer_burst(burst, target_ms)):
            break
    if sampled is not None and counted[0] is not None:  # the census of the burst that counts, read once
        own = {str(p) for p in own_builds(pid, worker.scratch, config.cache_dir)[0]}
        sampled[:] = [library_time_finding(counted[0].census(own), counted[0].error, counted[1], print_ms)]
    if prints is not None and check is not None:
        prints.append(check)
    if not kind:
        call(worker, "burst_release", config.timing_timeout_s, status, "letting the burst's inputs go")
    elif give_back:
        _give_back(worker, config)
    return burst, distinct


def _give_back(ref: Worker, config: VerifyConfig) -> None:
    """The reference's allocator returns its cached blocks to the device (`device_memory`), outside any window the
    parent measures. In large-output mode eager's timing leaves its peak cached in the reference worker (inputs, a
    burst's window buffer, outputs: 50.7 GiB for KernelBench L1 problem 38 on an H100, 2026-12-05), and the
    candidate's next request then ran out of device memory beside it: a `resource_error` for an honest kernel."""
    call(ref, "device_memory", config.run_timeout_s, Status.bad_problem, "giving eager's memory back")


def _check_bursts(bursts: list[BurstCheck], ref: Worker, config: VerifyConfig, fp_seed: int, extra: list[float]) -> int:
    """The calls picked from every candidate burst against the reference on the same inputs: the burst is timed by
    the parent's clock, so its calls answer for their results like the rounds' timed calls. Returns how many."""
    atol, rtol = config.tolerances()
    checked = 0
    for n, b in enumerate(bursts):
        what = "reference on the bursts' inputs"
        picked = list(b.got)
        want = reference_reply(ChecksReply, call(ref, "burst_prints", config.run_timeout_s, Status.bad_problem, what,
                                                 seed=b.seed, sets=b.sets, calls=picked, fp_seed=fp_seed), what).prints
        if len(want) != len(picked):
            raise Stop(Status.bad_problem, f"the reference worker sent {len(want)} fingerprints for {len(picked)} calls ({what})")
        for k, w in zip(picked, want, strict=True):
            if why := projection_mismatch(b.got[k], w, atol, rtol, extra, split=b.split):
                detail = f"call {k + 1} of {b.calls} in wall-clock burst {n + 1} of {len(bursts)}: {why}"
                raise Stop(Status.output_mismatch,
                           f"a burst call returned a wrong result (skipped, stale or cached work): {detail}",
                           [Finding(rule="burst-output-fingerprint", severity="reject",
                                    message="every call of the wall-clock burst must compute its own inputs' result",
                                    evidence=detail)])
        checked += len(picked)
    return checked


class WallCheck(NamedTuple):
    candidate: WallRatios
    eager: WallRatios
    attempts: int
    """Bursts the candidate needed before one was within the bounds (1: the first)."""
    distinct: bool
    """Whether every burst call had inputs of its own (`BurstInputs.distinct`, from the reference's process)."""
    speedup: float | None
    """Eager's per-call burst time over the candidate's, both by the parent's clock (`Burst.per_call_ms`); None
    where either is nothing once the projections are set aside (they took the whole burst)."""


def _wall_check(cand: Worker, ref: Worker, config: VerifyConfig, cand_host: list[float], eager_host: list[float],
                seed: int, prints: list[BurstCheck], fp_seed: int, hold: Hold, sets: int = BURST_SETS,
                large: bool = False, findings: list[Finding] | None = None, split: bool = False) -> WallCheck:
    """The candidate's and eager's wall ratios for one round; raises on a candidate beyond the bound, by both the
    parent's clock and the kernel's account of its worker, in three attempts (a disagreement that does not repeat is
    not a verdict). The calls picked from the candidate's bursts go to `prints`. `large`: large-output mode (eager's
    memory goes back to the device after each of its bursts). `findings`: where the candidate's bursts are sampled
    (`strict` on the CPU: `cpu_samples`), a missing census is flagged there; library code doing the work raises.
    `split`: every subject's projections split into finite part and NaN/inf counts (`nonfinite_outputs`)."""
    c_med, e_med = statistics.median(cand_host), statistics.median(eager_host)
    sampled: list[Finding | None] | None = [] if findings is not None and not cand.device.startswith("cuda") else None
    evidence: list[str] = []
    with hold():  # the candidate stopped, as for eager's bursts: its own work cannot stretch what is set aside
        print_ms = _print_cost(ref, config, seed + 3, sets, burst_calls(config.wall_check_ms, c_med), fp_seed, split)
    distinct = True
    for attempt in range(3):
        with hold():
            eager, distinct = _burst(ref, config, e_med, seed + 10 * attempt + 5, config.wall_check_ms, fp_seed,
                                     sets=sets, print_ms=print_ms, give_back=large, split=split, kind="eager")
        # A slow request widens the slack (a fixed cost per request); the candidate's burst grows with it.
        subject, _ = _burst(cand, config, c_med, seed + 10 * attempt, burst_target_ms(config.wall_check_ms, eager, attempt),
                            fp_seed, resize=True, prints=prints, sets=sets, print_ms=print_ms, sampled=sampled,
                            split=split)
        if sampled and (seen := sampled[0]) is not None and findings is not None:
            if seen.severity == "reject":
                raise Stop(Status.no_custom_kernel, f"{seen.rule}: {seen.message}", [seen])
            if not any(f.rule == seen.rule for f in findings):
                findings.append(seen)
        # eager again after it: the bound's slack comes from the quieter of the two, so one request slowed by a
        # busy host cannot widen it for a candidate
        with hold():
            again, _ = _burst(ref, config, e_med, seed + 10 * attempt + 7, config.wall_check_ms, fp_seed, sets=sets,
                              print_ms=print_ms, give_back=large, split=split, kind="eager")
        outside, requests = outside_wait_ms(eager, again), request_allowance_ms(eager, again)
        eager = min(eager, again, key=lambda b: b.free_wall_ms - b.reported_ms)
        if (finding := wall_clock_finding(subject, eager, outside, requests)) is None:
            per_call = (eager.per_call_ms, subject.per_call_ms)
            return WallCheck(ratios(subject), ratios(eager), attempt + 1, distinct,
                             per_call[0] / per_call[1] if min(per_call) > 0 else None)
        evidence.append(f"attempt {attempt + 1}: {finding.evidence}")
    finding = finding.model_copy(update={"evidence": " | ".join(evidence)})
    raise Stop(Status.timing_anomaly, f"the wall-clock bound failed in 3 of 3 attempts; {evidence[-1]}", [finding])


def reference_nonfinite(refdata: ReferenceData) -> bool:
    """Whether the reference's trial outputs hold NaN or inf (large-output mode: its trials are described, not sent,
    and this is False), read once per judgement: the bursts' projections are then split (`CallPrinter`)."""
    return any(isinstance(t, torch.Tensor) and t.numel() and not t.is_meta and (t.is_floating_point() or t.is_complex())
               and not bool(torch.isfinite(t).all()) for trial in refdata.usable for t in trial.outputs["tensors"])


def nonfinite_outputs(reference: bool, mine: CandidateTimingReply) -> bool:
    """Whether a round's bursts are projected split (`CallPrinter`): where the reference's outputs hold NaN or inf
    (`reference_nonfinite`), or the candidate's own fingerprints of the round's timed calls say its outputs do (a
    plain projection is then non-finite whatever else the output holds). The second is the candidate's word, but its
    timed calls answer for it: a fingerprint that hides the reference's NaN fails its check, and one that claims NaN
    only splits the burst."""
    return reference or any(p.get("nan") or p.get("posinf") or p.get("neginf") for c in mine.calls for p in c.fp[1:])


def _print_cost(ref: Worker, config: VerifyConfig, seed: int, sets: int, calls: int, fp_seed: int,
                split: bool = False) -> float:
    """The reference's measure of what one burst call's projection adds (ms), on eager bursts of up to 2000 calls."""
    what = "measuring the burst's projections"
    got = call(ref, "burst_print_cost", config.timing_timeout_s, Status.bad_problem, what, seed=seed, sets=sets,
               calls=max(3, min(calls, 2000)), fp_seed=fp_seed, split=split)
    return reference_reply(PrintCostReply, got, what).ms


def time_candidate(cand: Worker, ref: Worker, refdata: ReferenceData, config: VerifyConfig, out: Outcome,
                   extra: list[float], exclusive: Exclusive) -> Timing:
    """`extra`: per output, the largest error budget the correctness trials needed above atol + rtol·|r|.
    `exclusive()`: the device alone, for the rounds and the wall-clock bursts only; the `torch.compile` build
    before them and the checks of the timed calls after them share the device with other judgements."""
    baseline_key = out.baseline_key
    l2 = int(refdata.env.get("l2_bytes", 0))
    rounds, budget = config.timing_plan()
    wall = config.timing_wall_ms()
    lead = config.timing_lead_us
    dev: dict[str, list[float]] = {"candidate": [], "eager": [], "compile": []}
    hosted: dict[str, list[float]] = {"candidate": [], "eager": [], "compile": []}
    host: list[float] = []
    escaped: list[float] = []
    leads: list[float] = []
    short = {"candidate": 0, "eager": 0}  # device-time calls whose enqueue outlasted the lead (timing.lead_short)
    walls: list[WallCheck] = []
    timed: list[tuple[CandidateTimingReply, int]] = []  # each round's reply and its fingerprint seed, checked after the rounds
    secret = random.SystemRandom()  # what is checked must not follow from seeds the candidate is given
    bursts: list[BurstCheck] = []  # the calls picked from every candidate burst, checked after the rounds
    burst_fp = secret.randrange(1 << 31)
    base = config.seed + 1_000_000
    sets = LARGE_BURST_SETS if refdata.large else BURST_SETS  # an input set can take gigabytes there
    holds: list[Held] = []
    record = records_ops(config)

    @contextlib.contextmanager
    def hold() -> Iterator[Held]:
        """The candidate's process tree stopped while a baseline is timed (freeze.py)."""
        with held_still(cand.pid) as held:
            holds.append(held)
            yield held

    with out.phase("compile_baseline"):  # its own exclusive block, before the candidate's (baseline_run.py)
        comp_run = compile_baseline(ref, l2, config, baseline_key, exclusive, hold)
    if refdata.large:  # Inductor's buffers and the baseline's timing peak, not beside the candidate's rounds
        _give_back(ref, config)
    if comp_run.baseline is not None:
        dev["compile"], hosted["compile"] = list(comp_run.baseline.samples), list(comp_run.baseline.host_samples)
    given = refdata.usable[0].inputs
    ref_nonfinite = reference_nonfinite(refdata)
    with exclusive() as waited, out.phase("timing_held"):
        out.phase_seconds["timing_lock_wait"] = waited
        for r in range(rounds):
            seed = base + 10 * r * ROUND_SEEDS
            fp_seed = secret.randrange(1 << 31)
            res = call(cand, "time", config.timing_timeout_s, Status.runtime_error, "timing the candidate",
                        budget_ms=budget, seed=seed, l2_bytes=l2, check_at=secret.randrange(1 << 30), lead_us=lead,
                        fp_seed=fp_seed, wall_ms=wall, inputs_by_seed=refdata.large,
                        record_at=secret.randrange(1 << 30))
            mine = candidate_timing_reply(res, "timing the candidate")
            integrity(mine.integrity, "timing")
            if mine.watched:  # a watched call among the timed ones, which forward cannot tell from the others
                out.watched_calls.append(dict(mine.kernel_calls))
            if record:  # PyTorch compute only where forward is not checked is seen here (strict)
                judge_torch_ops(mine.torch_ops, mine.kernel_ops, config, out.findings)
            check_reported(mine, seed, given)  # what reaches the reference from this reply is what was asked
            if refdata.large:  # its copy of the checked call's outputs stays on its device until checked: one round's
                _check_full(mine, ref, config, r, cand)  # at a time, compared now (its descriptors came with it)
            dev["candidate"] += mine.samples
            hosted["candidate"] += mine.host_samples
            host += mine.host
            escaped.append(mine.escaped_ms)
            leads.append(mine.lead_us)
            short["candidate"] += mine.lead_short
            flush = mine.flush_bytes
            timed.append((mine, fp_seed))
            with hold():
                eager = call(ref, "time", config.timing_timeout_s, Status.bad_problem, "timing eager", kind="eager",
                             budget_ms=budget, seed=seed + ROUND_SEEDS, l2_bytes=l2, lead_us=lead, wall_ms=wall)
            if refdata.large:
                _give_back(ref, config)
            theirs = timing_reply(eager, "timing eager")
            dev["eager"] += theirs.samples
            hosted["eager"] += theirs.host_samples
            short["eager"] += theirs.lead_short
            with out.phase("timing_bursts"):
                walls.append(_wall_check(cand, ref, config, mine.host_samples, theirs.host_samples,
                                          seed + 4 * ROUND_SEEDS, bursts, burst_fp, hold, sets, refdata.large,
                                          out.findings if record else None, nonfinite_outputs(ref_nonfinite, mine)))
    with out.phase("timing_checks"):  # every round's calls, after the last: the candidate committed to them all
        mutates = any(t.mutates_inputs for t in refdata.usable)
        checked = sum(_check_round(res, ref, config, fp_seed, extra, r, full=not refdata.large, mutates=mutates)
                      for r, (res, fp_seed) in enumerate(timed))
        checked += _check_bursts(bursts, ref, config, burst_fp, extra)
    if others := sorted({p for h in holds for p in h.others}):
        out.findings.append(Finding(rule="candidate-processes", severity="flag",
                                    message=f"the candidate's worker ran {len(others)} other process(es) of its own "
                                            "while its baselines were timed (stopped meanwhile, killed with the worker)",
                                    evidence="pids " + ", ".join(map(str, others[:10]))))
    cand_stat, eager_stat = summarize(dev["candidate"]), summarize(dev["eager"])
    comp_stat = summarize(dev["compile"]) if dev["compile"] else None
    host_med = summarize(host).median_ms
    if cand_stat.median_ms > 0.05 and host_med > 0 and cand_stat.median_ms > 1.5 * host_med + 0.05:
        raise Stop(Status.timing_anomaly, f"device time {cand_stat.median_ms:.3f} ms exceeds host time {host_med:.3f} ms")
    escaped_ms = statistics.median_high(escaped)
    if (finding := escaped_work(cand_stat.median_ms, escaped_ms)) is not None:
        raise Stop(Status.timing_anomaly, finding.message, [finding])
    c_host, e_host = summarize(hosted["candidate"]), summarize(hosted["eager"])
    wall_speedups = [w.speedup for w in walls if w.speedup is not None]
    comp_host = summarize(hosted["compile"]) if hosted["compile"] else None
    return Timing(
        candidate=cand_stat, eager=eager_stat, compile=comp_stat,
        compile_baseline_error="" if comp_stat else (comp_run.error or "no samples"),
        speedup_vs_eager=eager_stat.median_ms / max(cand_stat.median_ms, 1e-9),
        speedup_vs_compile=(comp_stat.median_ms / max(cand_stat.median_ms, 1e-9)) if comp_stat else None,
        timer="cuda_events" if cand.device.startswith("cuda") else "host", l2_flush_bytes=flush,
        input_sets=len(dev["candidate"]), escaped_ms=escaped_ms, lead_us=max(leads),
        candidate_host=c_host, eager_host=e_host, compile_host=comp_host,
        speedup_vs_eager_host=e_host.median_ms / max(c_host.median_ms, 1e-9),
        speedup_vs_compile_host=(comp_host.median_ms / max(c_host.median_ms, 1e-9)) if comp_host else None,
        timed_calls_checked=checked,
        speedup_vs_eager_wall=round(statistics.median(wall_speedups), 4) if wall_speedups else None,
        wall_ratio=max(w.candidate.cold for w in walls), wall_ratio_eager=max(w.eager.cold for w in walls),
        burst_inputs_distinct=all(w.distinct for w in walls),
        clock_ratio=max(w.candidate.clock for w in walls), clock_ratio_cpu=max(w.candidate.cpu for w in walls),
        candidate_held=sum(1 for h in holds if h.processes), wall_check_attempts=max(w.attempts for w in walls),
        profile=config.timing_profile, rounds=rounds,
        baselines_cached=comp_run.cached,
        lead_short_calls=short["candidate"], lead_short_calls_eager=short["eager"],
    )
