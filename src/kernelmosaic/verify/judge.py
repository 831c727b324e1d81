"""The judging flow for one candidate on one device: load, construct, check every trial, census, time.

Runs in the trusted parent; every fact comes from worker replies (data only) and every decision is made here.
A failure at any phase ends the flow through `Stop`, which carries the status; nothing returns None.
"""

from __future__ import annotations

from pathlib import Path

from kernelmosaic.contracts.verdict import Finding, MemoryUse, Status
from kernelmosaic.verify.binary_check import first_reject, own_build_findings
from kernelmosaic.verify.compare import compare_outputs, output_nbytes
from kernelmosaic.verify.config import VerifyConfig
from kernelmosaic.verify.got_watch import GotPoller, GotSnapshot, got_changes, got_snapshot
from kernelmosaic.verify.judgement import (
    Exclusive,
    Outcome,
    Stop,
    call,
    integrity,
)
from kernelmosaic.verify.large import judge_large_trials
from kernelmosaic.verify.pool import Worker
from kernelmosaic.verify.reference_data import ReferenceData, RefTrial, reference_reply
from kernelmosaic.verify.run_replies import (
    ForwardEnd,
    InitReply,
    LoadReply,
    PeakReply,
    RefillReply,
    RunReply,
    candidate_reply,
    candidate_reply_stop,
    census_reply,
)
from kernelmosaic.verify.static.sources import builds_after_import
from kernelmosaic.verify.timed import time_candidate

__all__ = ["judge_candidate"]


def judge_candidate(cand: Worker, ref: Worker, refdata: ReferenceData, candidate_path: str,
                    config: VerifyConfig, timing: bool, out: Outcome, exclusive: Exclusive) -> None:
    """Fill `out` or raise Stop. `cand` is a fresh candidate worker; `ref` holds the problem already set up;
    `exclusive()` holds the device alone (yielding the seconds waited) for the timing phase (devlock.py)."""
    atol, rtol = config.tolerances()
    # GOTs, code, C entry points: before any candidate code runs (an empty snapshot watches nothing)
    got = got_snapshot(cand.pid, cand.watched) if config.memory_watch else GotSnapshot(pid=cand.pid)
    if got.error:
        out.findings.append(Finding(rule="got-unwatched", severity="flag", evidence=got.error[:300],
                                    message="the candidate worker's memory could not be read from the verifier's "
                                            "process, so its libraries' GOT slots were not watched"))
    # a build in `__init__` or a lazy loader runs in this worker, not ahead in the compile stage: its time is a build's
    try:
        lazy = config.compile_timeout_s if builds_after_import(Path(candidate_path).read_text(errors="replace")) else 0.0
    except OSError:
        lazy = 0.0
    with out.phase("load_init"):
        with out.phase("load"):
            loaded = candidate_reply(LoadReply, call(cand, "load", config.load_timeout_s, Status.load_error,
                                                     "loading the candidate", candidate=candidate_path,
                                                     cache_dir=str(config.cache_dir)), "load")
        integrity(loaded.integrity, "import")
        with out.phase("init"):
            init = candidate_reply(InitReply, call(cand, "init", config.init_timeout_s + lazy, Status.init_error,
                                                   "constructing ModelNew", init_inputs=refdata.setup.init_inputs,
                                                   state_dict=refdata.setup.state_dict, seed=config.seed,
                                                   precision=config.precision), "init")
        out.weights = {"copied": len(init.copied), "not_copied": init.skipped}
        integrity(init.integrity, "construction")

    usable = refdata.usable
    if refdata.large:  # outputs compared in the reference worker, one trial at a time (verify/large.py)

        ran, extra = judge_large_trials(cand, ref, refdata, config, out)
    else:
        ran, extra = _judge_trials(cand, usable, config, out, lazy)
    if ran.extra_threads > 0:
        raise Stop(Status.timing_anomaly, f"{ran.extra_threads} thread(s) left running after forward",
                   [Finding(rule="background-threads", severity="reject",
                            message="threads outlive forward: their work escapes timing", evidence=str(ran.extra_threads))])

    with out.phase("checks"):  # what the candidate built for itself calls; kernel census and peak memory (CUDA)
        _got_intact(got, "forward")
        if config.static_checks:
            built = own_build_findings(cand.pid, cand.scratch, config.cache_dir, config.static_policy())
            if (reject := first_reject(built)) is not None:
                raise Stop(Status.static_reject, reject, built)
            out.findings += built
        if cand.device.startswith("cuda"):
            out.census = census = census_reply(call(cand, "census", config.run_timeout_s, Status.runtime_error,
                                                    "kernel census", host_inputs=usable[0].inputs))
            if census.custom == 0:
                names = ", ".join(k.name[:60] for k in census.kernels[:5]) or "none"
                raise Stop(Status.no_custom_kernel, f"no kernel of the candidate's own ran (kernels seen: {names})",
                           [Finding(rule="no-custom-kernel", severity="reject",
                                    message="every kernel that ran came from ATen/cuBLAS/cuDNN/CuPy", evidence=names)])
            if census.library > 0:
                lib = [k.name[:80] for k in census.kernels if not k.custom]
                out.findings.append(Finding(rule="library-kernels", severity="flag",
                                            message=f"{census.library} library kernel launch(es) beside the custom ones",
                                            evidence="; ".join(lib[:5])))
            out.memory = _peak_memory(cand, ref, usable[0].inputs, config)
    if timing:

        with out.phase("timing"), GotPoller(got) as poller:
            out.timing = time_candidate(cand, ref, refdata, config, out, extra, exclusive)
        _got_intact(got, "timing", poller.changed)


def _got_intact(got: GotSnapshot, phase: str, seen: list[str] | None = None) -> None:
    """Stop when a GOT slot of a library the worker had before the candidate loaded has changed since (or `seen`:
    changed while the phase ran, by the poller)."""
    changed = seen or got_changes(got)
    if changed:
        raise Stop(Status.integrity_violation, f"integrity violation after {phase}: the candidate rewrote a call path "
                   f"of the worker's own (seen from outside its process): {changed[0]}",
                   [Finding(rule="harness-got", severity="reject", evidence="; ".join(changed)[:800],
                            message="a GOT slot or the machine code of a library the worker loaded before the "
                                    "candidate was rewritten: its clock, timer or reply would answer to the candidate")])


def _judge_trials(cand: Worker, usable: list[RefTrial], config: VerifyConfig, out: Outcome,
                  lazy: float = 0.0) -> tuple[ForwardEnd, list[float]]:
    """Every trial's outputs sent here and compared here, then the refill check; returns the run's reply and, per
    output, the most budget any trial needed above atol + rtol·|r|."""
    atol, rtol = config.tolerances()
    with out.phase("correctness"):
        ran = candidate_reply(RunReply, call(cand, "run", config.run_timeout_s + lazy, Status.runtime_error, "running forward",
                                             trials=[tr.inputs for tr in usable],
                                             poison_sizes=[(n + 3) // 4 for n in output_nbytes(usable[0].outputs)]),
                              "run")
    with out.phase("compare"):  # the trials' outputs against the oracle, the refill check
        corr = out.correctness
        corr.trials, corr.atol, corr.rtol, corr.seed = len(usable), atol, rtol, config.seed
        corr.distributions = sorted({tr.distribution for tr in usable})
        extra: list[float] = []  # per output: the most budget any trial needed above atol + rtol·|r|
        if len(ran.trials) != len(usable):
            raise candidate_reply_stop(f"run: trials: {len(ran.trials)} results for {len(usable)} trials")
        for k, (tr, got) in enumerate(zip(usable, ran.trials, strict=True)):
            cmp = compare_outputs(tr.outputs, dict(got.outputs), atol, rtol, tr.oracle or None)
            extra = [max(a, b) for a, b in zip(extra, cmp.extra, strict=False)] + cmp.extra[len(extra):]
            corr.max_abs_error = max(corr.max_abs_error, cmp.max_abs)
            corr.max_rel_error = max(corr.max_rel_error, cmp.max_rel)
            corr.error_vs_fp64 = round(max(corr.error_vs_fp64, cmp.budget_used), 4)
            corr.reference_error_vs_fp64 = round(max(corr.reference_error_vs_fp64, cmp.reference_budget_used), 4)
            if not cmp.ok:
                corr.detail = f"trial {k} ({tr.distribution} inputs): {cmp.detail}"
                raise Stop(cmp.status, f"wrong result on trial {k} of {len(usable)}: {cmp.detail}")
            if got.mutated and not tr.mutates_inputs:
                raise Stop(Status.integrity_violation, f"forward modified its input(s) {got.mutated}; the reference does not",
                           [Finding(rule="input-mutation", severity="reject", message="the candidate wrote into its inputs",
                                    evidence=f"inputs {got.mutated} changed on trial {k}")])
            if got.repeat is not None:  # both runs within the budget of the oracle, and each within it of the other
                again = compare_outputs(dict(got.outputs), dict(got.repeat), atol, rtol, tr.oracle or None)
                if not again.ok:
                    raise Stop(Status.nondeterministic, f"two runs on the same inputs disagree: {again.detail}")
            corr.passed += 1
        if ran.aliased:
            k = ran.aliased[0]
            detail = f"trial {k}'s output is the memory trial {k - 1}'s output was returned in"
            raise Stop(Status.output_mismatch, f"forward returned memory it had returned on the previous call: {detail}",
                       [Finding(rule="output-aliasing", severity="reject",
                                message="forward must return new outputs on every call: a module-held buffer returned "
                                        "each time overwrites the result a caller still holds (return a fresh tensor, "
                                        "or `.clone()` the buffer)", evidence=detail)])
        integrity(ran.integrity, "forward")
        _refill_check(cand, usable, config)
    return ran, extra


def _peak_memory(cand: Worker, ref: Worker, host_inputs: list, config: VerifyConfig) -> MemoryUse | None:
    """Peak device memory of one forward of the candidate and of the reference on the same inputs (a metric)."""
    mine = candidate_reply(PeakReply, call(cand, "peak_memory", config.run_timeout_s, Status.runtime_error,
                                           "measuring peak memory", host_inputs=host_inputs), "peak_memory")
    integrity(mine.integrity, "forward")
    theirs = reference_reply(PeakReply, call(ref, "peak_memory", config.run_timeout_s, Status.bad_problem,
                                             "the reference's peak memory", inputs=host_inputs), "peak_memory")
    if mine.peak_bytes is None or theirs.peak_bytes is None:
        return None
    c, r = mine.peak_bytes, theirs.peak_bytes
    return MemoryUse(candidate_peak_bytes=c, reference_peak_bytes=r, ratio=round(c / r, 4) if r > 0 else None)


def _refill_check(cand: Worker, usable: list[RefTrial], config: VerifyConfig) -> None:
    """The trials again, written in place into one set of input buffers without moving their version counters: an
    output cached on the buffers' identity goes stale (`stale-buffer-check`)."""
    atol, rtol = config.tolerances()
    res = candidate_reply(RefillReply, call(cand, "refill", config.run_timeout_s, Status.runtime_error,
                                            "running forward on refilled buffers", trials=[tr.inputs for tr in usable],
                                            poison_sizes=[(n + 3) // 4 for n in output_nbytes(usable[0].outputs)]),
                          "refill")
    integrity(res.integrity, "forward")
    if len(res.outputs) != len(usable) or len(res.versions) != len(usable):
        raise candidate_reply_stop(f"refill: {len(res.outputs)} results for {len(usable)} trials")
    for k, (tr, got) in enumerate(zip(usable, res.outputs, strict=True)):
        cmp = compare_outputs(tr.outputs, dict(got), atol, rtol, tr.oracle or None)
        if not cmp.ok:
            detail = f"trial {k}'s inputs written into the buffers of trial 0 (versions {res.versions[k]}): {cmp.detail}"
            raise Stop(Status.output_mismatch, f"a stale result on refilled input buffers: {detail}",
                       [Finding(rule="stale-buffer-check", severity="reject",
                                message="the output must follow the inputs' values, not the buffers' identity",
                                evidence=detail)])
