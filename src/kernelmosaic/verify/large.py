"""The correctness trials of a large-output problem: compared in the reference worker, one trial at a time.

For each usable trial the reference worker recomputes and holds the trial (`kmworker/held.py`) and hands its inputs
out as memfds; this process relays them to the candidate worker, which runs forward (twice on the first trial) and
hands its outputs out in place (`kmworker/shared_runs.py`); this process relays those to the reference worker, which
compares them with the one comparison (`kmworker/compare_core.py`) and answers with numbers. The refill check runs
in the same pass, on the same held trial. This process holds descriptors and numbers only: its memory per judgement
does not grow with the outputs. The verdict's statuses and messages are the ordinary mode's (judge.py).

The later checks that need whole outputs run the same way: the timing round's call checked in full (the candidate
keeps a copy on its device, `compare_timed_call`) and the kernel probes (the unperturbed outputs copied into the
reference worker, each perturbed forward's compared with them there: `hold_probe_outputs`, `compare_probe_outputs`).
"""

from __future__ import annotations

import os

from kernelmosaic.contracts.verdict import Finding, Status
from kernelmosaic.verify.compare import Comparison, compare_outputs, from_core, output_nbytes
from kernelmosaic.verify.config import VerifyConfig
from kernelmosaic.verify.judgement import (
    Outcome,
    Stop,
    call,
    call_on_candidate_data,
    integrity,
)
from kernelmosaic.verify.pool import Worker, WorkerDied, WorkerError
from kernelmosaic.verify.reference_data import (
    ComparedReply,
    ComputedReply,
    HeldReply,
    ReferenceData,
    RefTrial,
    reference_reply,
)
from kernelmosaic.verify.run_replies import ForwardEnd, SharedRefillReply, SharedRunReply, candidate_reply

__all__ = ["alternative_comparisons", "compare_probe_outputs", "compare_timed_call", "hold_probe_outputs",
           "judge_large_trials", "let_go_probes"]

def _relay(src: Worker, dst: Worker) -> list[int]:
    """The descriptors that came with `src`'s last reply, attached to `dst`'s next request (the caller closes them)."""
    fds = src.channel.take_fds()
    dst.channel.attach(fds)
    return fds


def _close(fds: list[int]) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


def _compared(ref: Worker, cand: Worker, config: VerifyConfig, what: str, op: str = "compare_held",
              **args) -> ComparedReply:
    """`op` (`compare_held`, `compare_probe`) on the outputs the candidate just handed out (`_handed`)."""
    return reference_reply(ComparedReply, _handed(ref, cand, config, what, op, **args), what)


def _handed(ref: Worker, cand: Worker, config: VerifyConfig, what: str, op: str, **args) -> object:
    """`op` (`compare_held`, `hold_probe`, `compare_probe`) on the outputs the candidate just handed out. A reference
    that cannot map them (a descriptor that does not hold what it says) is the candidate's failure; the reference
    worker is replaced if it went down."""
    atol, rtol = config.tolerances()
    fds = _relay(cand, ref)
    tolerances = {} if op == "hold_probe" else {"atol": atol, "rtol": rtol}
    try:
        return ref.call(op, config.run_timeout_s, **tolerances, **args)
    except WorkerError as exc:
        err = exc.error
        raise Stop(Status.runtime_error, f"{what}: the candidate's outputs could not be read in place: "
                   f"{err.get('type')}: {err.get('message', '')[:400]}") from exc
    except WorkerDied as exc:
        raise Stop(Status.crash, f"{what}: the reference worker died reading the candidate's outputs: {exc.detail}") from exc
    finally:
        ref.channel.attach([])
        _close(fds)


def judge_large_trials(cand: Worker, ref: Worker, refdata: ReferenceData, config: VerifyConfig,
                       out: Outcome) -> tuple[ForwardEnd, list[float]]:
    """Fill `out.correctness` as the ordinary mode does, or raise Stop with the same status and message; then the
    refill check (`stale-buffer-check`). Returns the run's integrity report and thread count, and per output the most
    budget any trial needed above atol + rtol·|r| (the timing checks' allowance)."""
    atol, rtol = config.tolerances()
    usable = refdata.usable
    corr = out.correctness
    corr.trials, corr.atol, corr.rtol, corr.seed = len(usable), atol, rtol, config.seed
    corr.distributions = sorted({tr.distribution for tr in usable})
    poison = [(n + 3) // 4 for n in output_nbytes(usable[0].outputs)]
    extra: list[float] = []
    ran = ForwardEnd(integrity=[], extra_threads=0)  # the last trial's run: what judge_candidate checks after them
    out_bytes = sum(output_nbytes(usable[0].outputs))
    out.findings.append(Finding(rule="large-output-mode", severity="flag",
                                message=f"outputs of {out_bytes / 2**20:.0f} MiB per trial compared in the reference "
                                        "worker, one trial at a time; the reference audit (task-* checks) did not run",
                                evidence=f"large_output_bytes = {config.large_output_bytes}"))
    try:
        for k, tr in enumerate(usable):
            cmp, ran = _large_trial(cand, ref, config, out, k, tr, len(usable), poison)
            extra = [max(a, b) for a, b in zip(extra, cmp.extra, strict=False)] + cmp.extra[len(extra):]
    finally:
        _let_go(ref, config)
    return ran, extra


def _let_go(ref: Worker, config: VerifyConfig) -> None:
    """The reference worker drops its held trial, whatever ended the trials (a dead worker holds nothing)."""
    if ref.alive:
        try:
            ref.call("release_held", config.run_timeout_s)
        except (WorkerDied, WorkerError):
            pass


def _large_trial(cand: Worker, ref: Worker, config: VerifyConfig, out: Outcome, k: int, tr: RefTrial, trials: int,
                 poison: list[int]) -> tuple[Comparison, ForwardEnd]:
    """Trial k: recomputed and held by the reference, run by the candidate, compared in place, then its refill (or
    Stop). Returns the trial's comparison and the run's integrity report and thread count."""
    corr = out.correctness
    with out.phase("reference_trial"):
        held = reference_reply(HeldReply, call(ref, "large_trial", config.run_timeout_s, Status.bad_problem,
                                               f"recomputing reference trial {k}", seed=tr.seed,
                                               distribution=tr.distribution), "large_trial")
    fds = ref.channel.take_fds()
    try:
        with out.phase("correctness"):
            cand.channel.attach(fds)
            got = candidate_reply(SharedRunReply, call(cand, "run_shared", config.run_timeout_s, Status.runtime_error,
                                                       "running forward", inputs=held.inputs, poison_sizes=poison,
                                                       repeat=k == 0), "run_shared")
        with out.phase("compare"):
            res = _compared(ref, cand, config, f"trial {k}", outputs=got.outputs, repeat=got.repeat)
            cmp = from_core(res.comparison)
            _record(corr, cmp)
            if not cmp.ok:
                corr.detail = f"trial {k} ({tr.distribution} inputs): {cmp.detail}"
                raise Stop(cmp.status, f"wrong result on trial {k} of {trials}: {cmp.detail}")
            if got.mutated and not tr.mutates_inputs:
                raise Stop(Status.integrity_violation, f"forward modified its input(s) {got.mutated}; the reference does not",
                           [Finding(rule="input-mutation", severity="reject", message="the candidate wrote into its inputs",
                                    evidence=f"inputs {got.mutated} changed on trial {k}")])
            if res.repeat is not None and not (again := from_core(res.repeat)).ok:
                raise Stop(Status.nondeterministic, f"two runs on the same inputs disagree: {again.detail}")
            corr.passed += 1
            integrity(got.integrity, "forward")
            _refill(cand, ref, config, k, fds, held.inputs, poison)
        call(cand, "release_shared", config.run_timeout_s, Status.runtime_error, "releasing a trial's outputs")
    finally:
        cand.channel.attach([])
        _close(fds)
    return cmp, got


def _record(corr, cmp: Comparison) -> None:
    corr.max_abs_error = max(corr.max_abs_error, cmp.max_abs)
    corr.max_rel_error = max(corr.max_rel_error, cmp.max_rel)
    corr.error_vs_fp64 = round(max(corr.error_vs_fp64, cmp.budget_used), 4)
    corr.reference_error_vs_fp64 = round(max(corr.reference_error_vs_fp64, cmp.reference_budget_used), 4)


def _refill(cand: Worker, ref: Worker, config: VerifyConfig, k: int, fds: list[int], inputs: list[dict],
            poison: list[int]) -> None:
    """Trial k's inputs written into the buffers of trial 0 (`judge._refill_check`), against the same held trial."""
    cand.channel.attach(fds)
    res = candidate_reply(SharedRefillReply, call(cand, "refill_shared", config.run_timeout_s, Status.runtime_error,
                                                  "running forward on refilled buffers", inputs=inputs,
                                                  poison_sizes=poison, first=k == 0), "refill_shared")
    integrity(res.integrity, "forward")
    cmp = from_core(_compared(ref, cand, config, f"refill {k}", outputs=res.outputs).comparison)
    if not cmp.ok:
        detail = f"trial {k}'s inputs written into the buffers of trial 0 (versions {res.versions}): {cmp.detail}"
        raise Stop(Status.output_mismatch, f"a stale result on refilled input buffers: {detail}",
                   [Finding(rule="stale-buffer-check", severity="reject",
                            message="the output must follow the inputs' values, not the buffers' identity",
                            evidence=detail)])


def alternative_comparisons(cand: Worker, ref: Worker, usable: list[RefTrial], atol: float, rtol: float,
                            config: VerifyConfig) -> list[Comparison]:
    """An alternative shape set's trials in large-output mode (robustness.py: no repeat, no refill), compared in the
    reference worker; stops at the first that fails. Raises WorkerDied and WorkerError as the ordinary run does."""
    poison = [(n + 3) // 4 for n in output_nbytes(usable[0].outputs)]
    done: list[Comparison] = []
    try:
        for tr in usable:
            held = reference_reply(HeldReply, ref.call("large_trial", config.run_timeout_s, seed=tr.seed,
                                                       distribution=tr.distribution), "large_trial")
            fds = _relay(ref, cand)
            try:
                got = candidate_reply(SharedRunReply, cand.call("run_shared", config.run_timeout_s, inputs=held.inputs,
                                                                poison_sizes=poison, repeat=False), "run_shared")
            finally:
                cand.channel.attach([])
                _close(fds)
            fds = _relay(cand, ref)
            try:
                res = reference_reply(ComparedReply, ref.call("compare_held", config.run_timeout_s, atol=atol, rtol=rtol,
                                                              outputs=got.outputs), "compare_held")
            finally:
                ref.channel.attach([])
                _close(fds)
            cand.call("release_shared", config.run_timeout_s)
            done.append(from_core(res.comparison))
            if not done[-1].ok:
                break
    finally:
        _let_go(ref, config)
    return done


def compare_timed_call(ref: Worker, inputs: list | dict, got: dict, config: VerifyConfig,
                       cand: Worker | None = None) -> Comparison:
    """A timed call's outputs (`got`, from the candidate's timing reply) against the reference on the same inputs:
    `inputs` as sent, or {"seed": s} (large-output mode: the reference redraws them from the call's seed, as the
    fingerprint checks do). `cand` (large-output mode, right after its timing reply): `got` holds descriptors of the
    candidate's copy of the outputs (`candidate.time`), whose file descriptors came with that reply; they are relayed
    to the reference worker, which maps them and compares there (`check_given`), and the candidate lets its copy go.
    Otherwise outputs above `large_output_bytes`, or inputs named by seed, go to the reference worker whole; the
    reference's outputs, oracle and terms (16 bytes per fp32 element) never come here. Smaller ones come back with
    their oracle and are compared here."""
    atol, rtol = config.tolerances()
    if cand is not None:
        return _compare_timed_in_place(cand, ref, inputs, got, config)
    if isinstance(inputs, dict) or sum(output_nbytes(got)) > config.large_output_bytes:
        named = {"seed": int(inputs["seed"])} if isinstance(inputs, dict) else {"inputs": inputs}
        res = reference_reply(ComparedReply, call_on_candidate_data(
            ref, "check_given", config.run_timeout_s, "a timed call's reported inputs", outputs=got, atol=atol,
            rtol=rtol, **named), "check_given")
        return from_core(res.comparison)
    expected = reference_reply(ComputedReply, call_on_candidate_data(
        ref, "compute", config.run_timeout_s, "a timed call's reported inputs", inputs=inputs), "compute")
    return compare_outputs(dict(expected.outputs), got, atol, rtol, expected.oracle or None)


def _compare_timed_in_place(cand: Worker, ref: Worker, inputs: list | dict, got: dict, config: VerifyConfig) -> Comparison:
    """`compare_timed_call` in large-output mode: nothing of the outputs' size crosses a socket."""
    atol, rtol = config.tolerances()
    if not isinstance(inputs, dict) or not isinstance(got, dict) or not got.get("shared"):
        raise Stop(Status.runtime_error, "the candidate worker's timing reply did not hand its checked call's outputs "
                                         "out in place, as large-output mode asks")
    fds = _relay(cand, ref)
    try:
        res = reference_reply(ComparedReply, call_on_candidate_data(
            ref, "check_given", config.run_timeout_s, "a timed call's reported seed and outputs handed out in place",
            outputs=got, atol=atol, rtol=rtol, seed=int(inputs["seed"])), "check_given")
    finally:
        ref.channel.attach([])
        _close(fds)
    call(cand, "release_shared", config.run_timeout_s, Status.runtime_error, "releasing a timed call's outputs")
    return from_core(res.comparison)


def hold_probe_outputs(cand: Worker, ref: Worker, config: VerifyConfig, outputs: dict) -> None:
    """The unperturbed kernel probe's outputs (descriptors from `cand`'s last reply) copied into the reference
    worker (`hold_probe`), for `compare_probe_outputs`; the candidate lets its own go."""
    _handed(ref, cand, config, "the kernel probe", "hold_probe", outputs=outputs)
    call(cand, "release_shared", config.run_timeout_s, Status.runtime_error, "releasing a probe's outputs")


def compare_probe_outputs(cand: Worker, ref: Worker, config: VerifyConfig, outputs: dict) -> Comparison:
    """A perturbed probe's outputs (descriptors from `cand`'s last reply) against the held unperturbed ones,
    compared in the reference worker with the ordinary mode's comparison (no oracle)."""
    res = _compared(ref, cand, config, "a perturbed kernel probe", op="compare_probe", outputs=outputs)
    call(cand, "release_shared", config.run_timeout_s, Status.runtime_error, "releasing a probe's outputs")
    return from_core(res.comparison)


def let_go_probes(cand: Worker, ref: Worker, config: VerifyConfig) -> None:
    """The probes are over, however they ended: the reference's copy and the candidate's exports go."""
    _let_go(ref, config)
    if cand.alive:
        try:
            cand.call("release_shared", config.run_timeout_s)
        except (WorkerDied, WorkerError):
            pass
