"""The candidate on a task's alternative shapes and dtypes, each judged against the reference run there.

A kernel written for the stated sizes only (sizes hard-coded, tails never handled) passes the task's own trials
and fails here. Failing an alternative is `shape-specialised`: a reject under `strict`, a flag under `kernelbench`.
An alternative the reference itself cannot run is reported (`bad_problem`) and never held against the candidate.
"""

from __future__ import annotations

from kernelmosaic.contracts.verdict import AlternativeResult, Finding, Robustness, Status
from kernelmosaic.verify.compare import compare_outputs, output_nbytes
from kernelmosaic.verify.config import VerifyConfig
from kernelmosaic.verify.judgement import Stop, status_of_death, status_of_error
from kernelmosaic.verify.large import alternative_comparisons
from kernelmosaic.verify.pool import Worker, WorkerDied, WorkerError, WorkerStartFailed
from kernelmosaic.verify.requests import Alternative
from kernelmosaic.verify.run_replies import RunReply, candidate_reply, candidate_reply_stop
from kernelmosaic.verify.slot import DeviceSlot

__all__ = ["Alternative", "check_robustness"]


def _judge_one(worker: Worker, slot: DeviceSlot, candidate: str, alt: Alternative, sha: str,
               config: VerifyConfig) -> AlternativeResult:
    precision = alt.precision or config.precision
    try:
        ref = slot.reference(str(alt.problem.resolve()), sha, precision=precision, trials=config.robustness_trials)
    except Stop as stop:
        return AlternativeResult(label=alt.label, passed=False, status=Status.bad_problem, detail=stop.message[:400])
    usable = ref.usable
    atol, rtol = config.tolerances(precision)
    result = AlternativeResult(label=alt.label, passed=False, status=Status.accepted, trials=len(usable))
    try:
        worker.call("init", config.init_timeout_s, init_inputs=ref.setup.init_inputs,
                    state_dict=ref.setup.state_dict, seed=config.seed, precision=precision)
        if ref.large:  # compared in the reference worker, one trial at a time (verify/large.py)
            cmps = alternative_comparisons(worker, slot.ref, usable, atol, rtol, config)
        else:
            ran = candidate_reply(RunReply, worker.call("run", config.run_timeout_s, trials=[tr.inputs for tr in usable],
                                                        poison_sizes=[(n + 3) // 4 for n in output_nbytes(usable[0].outputs)],
                                                        repeat_first=False), "run")
            if len(ran.trials) != len(usable):
                raise candidate_reply_stop(f"run: trials: {len(ran.trials)} results for {len(usable)} trials")
            # the float64 oracle, where the reference worker computed one, sets the error budget (verify/compare.py)
            cmps = (compare_outputs(tr.outputs, dict(got.outputs), atol, rtol, tr.oracle or None)
                    for tr, got in zip(usable, ran.trials, strict=True))
    except WorkerDied as exc:
        result.status, result.detail = status_of_death(exc), exc.detail[:400]
        return result
    except WorkerError as exc:
        result.status = status_of_error(exc.error, Status.runtime_error)
        result.detail = f"{exc.error.get('type')}: {exc.error.get('message', '')[:300]}"
        return result
    for k, (tr, cmp) in enumerate(zip(usable, cmps, strict=False)):  # a large-output run stops at its first failure
        result.max_abs_error = max(result.max_abs_error, cmp.max_abs)
        result.max_rel_error = max(result.max_rel_error, cmp.max_rel)
        if not cmp.ok:
            result.status, result.detail = cmp.status, f"trial {k} ({tr.distribution} inputs): {cmp.detail}"
            return result
    result.passed = True
    return result


def check_robustness(slot: DeviceSlot, candidate: str, alternatives: list[Alternative], shas: list[str],
                     config: VerifyConfig, into: Robustness, findings: list[Finding],
                     worker: Worker | None = None) -> None:
    """Judge the candidate on every alternative in one candidate worker (`worker`: one with the candidate loaded, the
    judged one, so the check starts no process; else the slot's spare; restarted after a death), built anew per
    alternative (`init`); the worker is killed at the end. Fill `into`; raise Stop under `strict` when one fails,
    append a flag under `kernelbench`."""
    try:
        for alt, sha in zip(alternatives, shas, strict=True):
            if worker is None or not worker.alive:  # the slot's spare where one is up (its Python and torch loaded)
                worker = slot.take_candidate_worker()
                worker.call("load", config.load_timeout_s, candidate=candidate, cache_dir=str(config.cache_dir))
            into.alternatives.append(_judge_one(worker, slot, candidate, alt, sha, config))
    except WorkerStartFailed:
        raise  # the host could not start a worker: nothing was learnt about the candidate
    except (WorkerDied, WorkerError, Stop) as exc:  # the worker died, or the candidate no longer loads: the rest fail
        if isinstance(exc, Stop) and exc.findings:  # a malformed reply (`worker-reply`): a rejection under any policy
            raise
        detail = exc.detail if isinstance(exc, WorkerDied) else exc.message if isinstance(exc, Stop) \
            else str(exc.error.get("message", ""))[:300]
        for alt in alternatives[len(into.alternatives):]:
            into.alternatives.append(AlternativeResult(label=alt.label, passed=False, status=Status.load_error,
                                                       detail=detail))
    finally:
        if worker is not None:
            worker.kill()
    failed = [r for r in into.alternatives if not r.passed and r.status != Status.bad_problem]
    into.passed = not failed
    if not failed:
        return
    evidence = "; ".join(f"{r.label}: {r.status.value}: {r.detail}" for r in failed)[:800]
    message = f"wrong or failing at {len(failed)} of {len(into.alternatives)} alternative shape/dtype set(s)"
    if config.policy == "strict":
        raise Stop(failed[0].status if failed[0].status != Status.accepted else Status.output_mismatch, message,
                   [Finding(rule="shape-specialised", severity="reject", message=message, evidence=evidence)])
    findings.append(Finding(rule="shape-specialised", severity="flag", message=message, evidence=evidence))
