"""The judging flow for one candidate on one device: load, construct, check every trial, census, time.

Runs in the trusted parent; every fact comes from worker replies (data only) and every decision is made here.
A failure at any phase ends the flow through `Stop`, which carries the status; nothing returns None.
"""

from __future__ import annotations

import random
import statistics
from dataclasses import dataclass, field

from kernelmosaic.verify.compare import compare_outputs, error_vs_float64, output_nbytes
from kernelmosaic.verify.config import VerifyConfig
from kernelmosaic.verify.pool import Worker, WorkerDied, WorkerError
from kernelmosaic.verify.stats import summarize
from kernelmosaic.verify.verdict import Correctness, Finding, Status, Timing

__all__ = ["Stop", "ReferenceData", "judge_candidate", "status_of_death", "status_of_error"]

_DEATH = {"timeout": Status.timeout, "crash": Status.crash, "resource": Status.resource_error}


class Stop(Exception):
    def __init__(self, status: Status, message: str, findings: list[Finding] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.findings = status, message, findings or []


def status_of_death(exc: WorkerDied) -> Status:
    return _DEATH.get(exc.kind, Status.crash)


def status_of_error(error: dict, phase_status: Status) -> Status:
    if error.get("cuda"):
        return Status.cuda_error
    if error.get("oom"):
        return Status.resource_error
    if "Error building extension" in error.get("message", ""):
        return Status.compile_error
    return phase_status


@dataclass
class ReferenceData:
    """What the reference worker produced for one problem under one config (cached across candidates)."""

    setup: dict
    trials: list[dict]
    env: dict


@dataclass
class Outcome:
    correctness: Correctness
    findings: list[Finding] = field(default_factory=list)
    timing: Timing | None = None
    census: dict = field(default_factory=dict)
    weights: dict = field(default_factory=dict)
    builds: list[dict] = field(default_factory=list)
    phase_seconds: dict[str, float] = field(default_factory=dict)


def _call(worker: Worker, op: str, timeout: float, phase_status: Status, what: str, **args) -> dict:
    try:
        return worker.call(op, timeout, **args)
    except WorkerDied as exc:
        raise Stop(status_of_death(exc), f"{what}: {exc.detail}") from exc
    except WorkerError as exc:
        err = exc.error
        raise Stop(status_of_error(err, phase_status), f"{what}: {err.get('type')}: {err.get('message', '')[:600]}") from exc


PRECISION_SLACK = 4.0
"""A candidate may be this many times further from float64 than the fp32 reference is (orders of summation
differ) before it counts as computing in lower precision."""


def _precision_honesty(trial: dict, got: dict, atol: float, rtol: float, corr: Correctness) -> None:
    cand = error_vs_float64(trial["outputs64"], got, atol, rtol)
    ref = error_vs_float64(trial["outputs64"], trial["outputs"], atol, rtol)
    corr.error_vs_fp64, corr.reference_error_vs_fp64 = round(cand, 4), round(ref, 4)
    if cand > 1.0 and cand > PRECISION_SLACK * max(ref, 0.25):
        raise Stop(Status.output_mismatch, f"less precise than fp32 allows: {cand:.1f}x the tolerance away from a float64 "
                   f"reference (the fp32 reference is {ref:.2f}x)",
                   [Finding(rule="precision-downgrade", severity="reject",
                            message="the task asks for fp32; the result looks computed in fp16/bf16/TF32",
                            evidence=f"error vs float64 {cand:.2f} tolerance units, fp32 reference {ref:.2f}")])


def _integrity(diffs: list[str], phase: str) -> None:
    if diffs:
        finding = Finding(rule="runtime-integrity", severity="reject",
                          message=f"the candidate changed the verifier's environment ({phase})", evidence="; ".join(diffs)[:800])
        raise Stop(Status.integrity_violation, f"integrity violation after {phase}: {diffs[0]}", [finding])


def judge_candidate(cand: Worker, ref: Worker, refdata: ReferenceData, candidate_path: str,
                    config: VerifyConfig, timing: bool, out: Outcome) -> None:
    """Fill `out` or raise Stop. `cand` is a fresh candidate worker; `ref` holds the problem already set up."""
    import time

    atol, rtol = config.tolerances()
    t = time.perf_counter()
    loaded = _call(cand, "load", config.load_timeout_s, Status.load_error, "loading the candidate",
                   candidate=candidate_path, cache_dir=str(config.cache_dir))
    out.builds = loaded["builds"]
    _integrity(loaded["integrity"], "import")
    init = _call(cand, "init", config.init_timeout_s, Status.init_error, "constructing ModelNew",
                 init_inputs=refdata.setup["init_inputs"], state_dict=refdata.setup["state_dict"], seed=config.seed,
                 precision=config.precision)
    out.weights = {"copied": len(init["copied"]), "not_copied": init["skipped"]}
    _integrity(init["integrity"], "construction")
    out.phase_seconds["load_init"] = time.perf_counter() - t

    t = time.perf_counter()
    usable = [tr for tr in refdata.trials if not tr["skipped"]]
    ran = _call(cand, "run", config.run_timeout_s, Status.runtime_error, "running forward",
                trials=[tr["inputs"] for tr in usable], poison_sizes=[(n + 3) // 4 for n in output_nbytes(usable[0]["outputs"])])
    out.phase_seconds["correctness"] = time.perf_counter() - t
    corr = out.correctness
    corr.trials, corr.atol, corr.rtol, corr.seed = len(usable), atol, rtol, config.seed
    corr.distributions = sorted({tr["distribution"] for tr in usable})
    for k, (tr, got) in enumerate(zip(usable, ran["trials"], strict=True)):
        cmp = compare_outputs(tr["outputs"], got["outputs"], atol, rtol)
        corr.max_abs_error = max(corr.max_abs_error, cmp.max_abs)
        corr.max_rel_error = max(corr.max_rel_error, cmp.max_rel)
        if not cmp.ok:
            corr.detail = f"trial {k} ({tr['distribution']} inputs): {cmp.detail}"
            raise Stop(cmp.status, f"wrong result on trial {k} of {len(usable)}: {cmp.detail}")
        if tr.get("outputs64"):
            _precision_honesty(tr, got["outputs"], atol, rtol, corr)
        if got["mutated"] and not tr["mutates_inputs"]:
            raise Stop(Status.integrity_violation, f"forward modified its input(s) {got['mutated']}; the reference does not",
                       [Finding(rule="input-mutation", severity="reject", message="the candidate wrote into its inputs",
                                evidence=f"inputs {got['mutated']} changed on trial {k}")])
        if "repeat" in got:
            again = compare_outputs(got["outputs"], got["repeat"], atol, rtol)
            if not again.ok:
                raise Stop(Status.nondeterministic, f"two runs on the same inputs disagree: {again.detail}")
        corr.passed += 1
    _integrity(ran["integrity"], "forward")
    if ran["extra_threads"] > 0:
        raise Stop(Status.timing_anomaly, f"{ran['extra_threads']} thread(s) left running after forward",
                   [Finding(rule="background-threads", severity="reject",
                            message="threads outlive forward: their work escapes timing", evidence=str(ran["extra_threads"]))])

    if cand.device.startswith("cuda"):
        out.census = _call(cand, "census", config.run_timeout_s, Status.runtime_error, "kernel census",
                           host_inputs=usable[0]["inputs"])
        if out.census["custom"] == 0:
            names = ", ".join(k["name"][:60] for k in out.census["kernels"][:5]) or "none"
            raise Stop(Status.no_custom_kernel, f"no kernel of the candidate's own ran (kernels seen: {names})",
                       [Finding(rule="no-custom-kernel", severity="reject",
                                message="every kernel that ran came from ATen/cuBLAS/cuDNN", evidence=names)])
        if out.census["library"] > 0:
            lib = [k["name"][:80] for k in out.census["kernels"] if not k["custom"]]
            out.findings.append(Finding(rule="library-kernels", severity="flag",
                                        message=f"{out.census['library']} library kernel launch(es) beside the custom ones",
                                        evidence="; ".join(lib[:5])))
    if timing:
        t = time.perf_counter()
        out.timing = _time(cand, ref, refdata, config, usable, out)
        out.phase_seconds["timing"] = time.perf_counter() - t


def _time(cand: Worker, ref: Worker, refdata: ReferenceData, config: VerifyConfig, usable: list[dict],
          out: Outcome) -> Timing:
    l2 = int(refdata.env.get("l2_bytes", 0))
    budget = config.timing_budget_ms
    samples: dict[str, list[float]] = {"candidate": [], "eager": [], "compile": []}
    host: list[float] = []
    escaped: list[float] = []
    compile_error = "" if config.compile_baseline else "disabled"
    rng = random.Random(config.seed)
    checked = None
    leads: list[float] = []
    if not compile_error:  # built before any round, so its compile never shares the host with a timed subject
        compile_error = _baseline_call(ref, "prepare_compile", config, "building torch.compile", seed=config.seed + 3000)[1]
    for r in range(config.timing_rounds):
        res = _call(cand, "time", config.timing_timeout_s, Status.runtime_error, "timing the candidate",
                    budget_ms=budget, seed=config.seed + 1000 + r, l2_bytes=l2, check_at=rng.randrange(1 << 30),
                    lead_us=config.timing_lead_us)
        _integrity(res["integrity"], "timing")
        samples["candidate"] += res["samples"]
        host += res["host"]
        escaped.append(res["escaped_ms"])
        leads.append(res["lead_us"])
        checked = checked or (res["checked_inputs"], res["checked_outputs"])
        flush = res["flush_bytes"]
        samples["eager"] += _call(ref, "time", config.timing_timeout_s, Status.bad_problem, "timing eager",
                                  kind="eager", budget_ms=budget, seed=config.seed + 2000 + r, l2_bytes=l2,
                                  lead_us=config.timing_lead_us)["samples"]
        if not compile_error:
            comp, compile_error = _baseline_call(ref, "time", config, "timing torch.compile", kind="compile",
                                                 budget_ms=budget, seed=config.seed + 3000 + r, l2_bytes=l2,
                                                 lead_us=config.timing_lead_us)
            samples["compile"] += comp["samples"] if comp else []
    expected = _call(ref, "compute", config.run_timeout_s, Status.bad_problem, "reference on a timed input",
                     inputs=checked[0])["outputs"]
    atol, rtol = config.tolerances()
    cmp = compare_outputs(expected, checked[1], atol, rtol)
    if not cmp.ok:
        raise Stop(cmp.status, f"a timed call returned a wrong result (stale or cached output?): {cmp.detail}",
                   [Finding(rule="timed-output-check", severity="reject",
                            message="outputs of timed calls must be right too", evidence=cmp.detail)])
    cand_stat, eager_stat = summarize(samples["candidate"]), summarize(samples["eager"])
    comp_stat = summarize(samples["compile"]) if samples["compile"] else None
    host_med = summarize(host).median_ms
    if cand_stat.median_ms > 0.05 and host_med > 0 and cand_stat.median_ms > 1.5 * host_med + 0.05:
        raise Stop(Status.timing_anomaly, f"device time {cand_stat.median_ms:.3f} ms exceeds host time {host_med:.3f} ms")
    escaped_ms = statistics.median_high(escaped)
    if (finding := escaped_work(cand_stat.median_ms, escaped_ms)) is not None:
        raise Stop(Status.timing_anomaly, finding.message, [finding])
    return Timing(
        candidate=cand_stat, eager=eager_stat, compile=comp_stat,
        compile_baseline_error="" if comp_stat else (compile_error or "no samples"),
        speedup_vs_eager=eager_stat.median_ms / max(cand_stat.median_ms, 1e-9),
        speedup_vs_compile=(comp_stat.median_ms / max(cand_stat.median_ms, 1e-9)) if comp_stat else None,
        timer="cuda_events" if cand.device.startswith("cuda") else "host", l2_flush_bytes=flush, input_sets=len(samples["candidate"]),
        escaped_ms=escaped_ms, lead_us=max(leads),
    )


def _baseline_call(ref: Worker, op: str, config: VerifyConfig, what: str, **args) -> tuple[dict | None, str]:
    """One call for the `torch.compile` baseline: (result, "") or (None, why it failed). A baseline that fails
    costs the baseline, not the verdict; a reference worker that dies is `bad_problem`."""
    try:
        return ref.call(op, config.timing_timeout_s, **args), ""
    except WorkerError as exc:
        return None, f"{exc.error.get('type')}: {exc.error.get('message', '')[:300]}"
    except WorkerDied as exc:
        raise Stop(Status.bad_problem, f"the reference worker died while {what}: {exc.detail}") from exc


ESCAPED_FLOOR_MS, ESCAPED_SHARE = 0.03, 0.15
"""Work that finishes after the candidate's stream by more than max(floor, share × stream time), beyond the
timing bracket's own cost, is work the stream-ordered time did not contain."""


def escaped_work(stream_ms: float, escaped_ms: float) -> Finding | None:
    """A finding when device-wide completion trails the candidate's stream (median over the timed calls)."""
    if escaped_ms <= max(ESCAPED_FLOOR_MS, ESCAPED_SHARE * stream_ms):
        return None
    return Finding(rule="timing-escaped-work", severity="reject",
                   message=f"the device stayed busy {escaped_ms:.3f} ms after the candidate's stream finished "
                           f"({stream_ms:.3f} ms): work on other streams escapes the stream-ordered time",
                   evidence=f"median trailing {escaped_ms:.4f} ms beyond the bracket's own cost")
