"""The judging flow for one candidate on one device: load, construct, check every trial, census, time.

Runs in the trusted parent; every fact comes from worker replies (data only) and every decision is made here.
A failure at any phase ends the flow through `Stop`, which carries the status; nothing returns None.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import torch

from kernelmosaic.contracts.verdict import Correctness, Finding, MemoryUse, Status, Timing
from kernelmosaic.verify.compare import compare_outputs, output_nbytes
from kernelmosaic.verify.config import VerifyConfig
from kernelmosaic.verify.pool import Worker, WorkerDied, WorkerError

__all__ = ["Stop", "ReferenceData", "Exclusive", "judge_candidate", "status_of_death", "status_of_error", "device_oom",
           "call_on_candidate_data", "check_reported"]

Exclusive = Callable[[], contextlib.AbstractContextManager[float]]
"""Holds the device alone for a timing phase, yielding the seconds it waited for it (devlock.DeviceHold)."""

_DEATH = {"timeout": Status.timeout, "crash": Status.crash, "resource": Status.resource_error}


class Stop(Exception):
    def __init__(self, status: Status, message: str, findings: list[Finding] | None = None, oom: str = "") -> None:
        super().__init__(message)
        self.status, self.message, self.findings = status, message, findings or []
        self.oom = oom
        """Who ran out of device memory: `reference_setup` (setting the problem up or making its trials),
        `reference` (later in the judgement), `candidate`; "" when the stop is not a device OOM. The verifier retries
        such a judgement once with the device held alone and then attributes it (`verify/device_memory.py`)."""

    def __reduce__(self):  # a job crosses processes (the Ray executor): pickled with its arguments
        return (Stop, (self.status, self.message, self.findings, self.oom))


def status_of_death(exc: WorkerDied) -> Status:
    return _DEATH.get(exc.kind, Status.crash)


def device_oom(error: dict) -> bool:
    """The worker's error is the device allocator running out (torch's `OutOfMemoryError`, CUDA's "out of memory"),
    not host memory (`MemoryError`, `std::bad_alloc`: the worker's own limits)."""
    return bool(error.get("oom")) and (error.get("type") == "OutOfMemoryError"
                                        or "CUDA out of memory" in error.get("message", ""))


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
    large: bool = False
    """Large-output mode (`VerifyConfig.large_output_bytes`): `trials` describe the trials without their data (inputs
    and outputs as `meta` tensors, each with its `seed`); the reference worker recomputes and compares each trial in
    place (verify/large.py)."""
    memory: dict = field(default_factory=dict)
    """The first trial's sizes in the reference worker: `input_bytes`, `output_bytes`, `weight_bytes` and, on CUDA,
    `peak_bytes` (the forward's peak beyond its inputs and weights): what memory admission sizes a judgement from."""


@dataclass
class Outcome:
    correctness: Correctness
    findings: list[Finding] = field(default_factory=list)
    timing: Timing | None = None
    census: dict = field(default_factory=dict)
    weights: dict = field(default_factory=dict)
    memory: MemoryUse | None = None
    builds: list[dict] = field(default_factory=list)
    phase_seconds: dict[str, float] = field(default_factory=dict)
    phase_started: dict[str, float] = field(default_factory=dict)
    """Wall-clock start (Unix seconds) of each phase's first entry."""
    baseline_key: str = ""
    """Where the `torch.compile` baseline of this problem is kept on disk ("" = not kept)."""
    device_alone: str = ""
    """Why this judgement holds the device alone ("" = shared with other judgements; `device_memory`)."""
    reference_memory: dict = field(default_factory=dict)
    """The reference's sizes (`ReferenceData.memory`), for attributing an out-of-memory."""

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Add the block's seconds to `phase_seconds[name]` when it completes (a phase cut short by a Stop is not
        recorded); a phase entered several times (one per timing round) adds up."""
        self.phase_started.setdefault(name, round(time.time(), 4))
        t = time.perf_counter()
        yield
        self.phase_seconds[name] = self.phase_seconds.get(name, 0.0) + time.perf_counter() - t


def _call(worker: Worker, op: str, timeout: float, phase_status: Status, what: str, **args) -> dict:
    try:
        return worker.call(op, timeout, **args)
    except WorkerDied as exc:
        raise Stop(status_of_death(exc), f"{what}: {exc.detail}") from exc
    except WorkerError as exc:
        err = exc.error
        oom = device_oom(err)  # torch's message lists every process on the device: keep it whole for `attribute`
        raise Stop(status_of_error(err, phase_status),
                   f"{what}: {err.get('type')}: {err.get('message', '')[:4000 if oom else 600]}",
                   oom=worker.role if oom else "") from exc


def call_on_candidate_data(ref: Worker, op: str, timeout: float, what: str, **args) -> dict:
    """A reference call on data that passed through the candidate's process (the inputs or seeds its timing reply
    reports): whatever makes the reference fail there is the candidate's doing (a forward that rebinds `x.data`,
    resizes its inputs, or reports inputs it was not given), a rejection, never `bad_problem`. The reference's own
    inputs are judged by `_call` with `bad_problem`. A device OOM keeps its retry (`device_memory`)."""
    try:
        return ref.call(op, timeout, **args)
    except WorkerDied as exc:
        detail = f"the reference worker failed on {what}: {exc.detail}"
        raise Stop(status_of_death(exc), detail,
                   [_reported_data_finding(detail)]) from exc
    except WorkerError as exc:
        err = exc.error
        detail = f"the reference raised on {what}: {err.get('type')}: {err.get('message', '')[:400]}"
        if device_oom(err):
            raise Stop(Status.resource_error, detail, oom="reference") from exc
        raise Stop(Status.runtime_error, detail, [_reported_data_finding(detail)]) from exc


def check_reported(res: dict, seed: int, given: list) -> None:
    """A timing reply's own account of its calls against what the parent asked: call i drew its inputs from seed
    `seed + i`, and the call copied in full has the problem's input shapes and dtypes (`given`: a trial's inputs).
    Raises Stop (`candidate-reported-inputs`) when it differs: forward changed its inputs, or the reply lies."""
    seeds = [c.get("seed") for c in res["calls"]]
    if seeds != list(range(seed, seed + len(seeds))):
        wrong = next(i for i, s in enumerate(seeds) if s != seed + i)
        detail = f"call {wrong + 1} of the round reports seed {seeds[wrong]}; it was given {seed + wrong}"
        raise Stop(Status.runtime_error, f"the timing reply misreports its calls: {detail}", [_reported_data_finding(detail)])
    reported = res["checked_inputs"]
    if isinstance(reported, dict):  # named by seed (large-output mode): the reference redraws them
        return
    for k, (got, want) in enumerate(zip(reported, given, strict=False)):
        if isinstance(want, torch.Tensor) and (not isinstance(got, torch.Tensor) or got.shape != want.shape
                                                or got.dtype != want.dtype):
            what = f"{tuple(got.shape)} {got.dtype}" if isinstance(got, torch.Tensor) else type(got).__name__
            detail = f"input {k} of the timed call checked in full is {what} after forward; the problem's is " \
                     f"{tuple(want.shape)} {want.dtype}"
            raise Stop(Status.runtime_error, f"forward changed its inputs during timing: {detail}",
                       [_reported_data_finding(detail)])
    if len(reported) != len(given):
        detail = f"the timed call checked in full reports {len(reported)} inputs; the problem has {len(given)}"
        raise Stop(Status.runtime_error, f"forward changed its inputs during timing: {detail}", [_reported_data_finding(detail)])


def _reported_data_finding(detail: str) -> Finding:
    return Finding(rule="candidate-reported-inputs", severity="reject",
                   message="candidate-reported-inputs: the inputs the candidate's process reported for a timed call are "
                           "not the ones it was given, or make the reference fail: forward changed them (rebinding "
                           "`x.data`, resizing or swapping an input) or the worker misreports them. Forward must leave its inputs' "
                           "storage and shape as given; returning new tensors (or writing into an output it allocates) "
                           "is accepted", evidence=detail[:800])


def _integrity(diffs: list[str], phase: str) -> None:
    if diffs:
        finding = Finding(rule="runtime-integrity", severity="reject",
                          message=f"the candidate changed the verifier's environment ({phase})", evidence="; ".join(diffs)[:800])
        raise Stop(Status.integrity_violation, f"integrity violation after {phase}: {diffs[0]}", [finding])


def judge_candidate(cand: Worker, ref: Worker, refdata: ReferenceData, candidate_path: str,
                    config: VerifyConfig, timing: bool, out: Outcome, exclusive: Exclusive) -> None:
    """Fill `out` or raise Stop. `cand` is a fresh candidate worker; `ref` holds the problem already set up;
    `exclusive()` holds the device alone (yielding the seconds waited) for the timing phase (devlock.py)."""
    atol, rtol = config.tolerances()
    with out.phase("load_init"):
        with out.phase("load"):
            loaded = _call(cand, "load", config.load_timeout_s, Status.load_error, "loading the candidate",
                           candidate=candidate_path, cache_dir=str(config.cache_dir))
        out.builds = loaded["builds"]
        _integrity(loaded["integrity"], "import")
        with out.phase("init"):
            init = _call(cand, "init", config.init_timeout_s, Status.init_error, "constructing ModelNew",
                         init_inputs=refdata.setup["init_inputs"], state_dict=refdata.setup["state_dict"],
                         seed=config.seed, precision=config.precision)
        out.weights = {"copied": len(init["copied"]), "not_copied": init["skipped"]}
        _integrity(init["integrity"], "construction")

    usable = [tr for tr in refdata.trials if not tr["skipped"]]
    if refdata.large:  # outputs compared in the reference worker, one trial at a time (verify/large.py)
        from kernelmosaic.verify.large import judge_large_trials

        ran, extra = judge_large_trials(cand, ref, refdata, config, out)
    else:
        ran, extra = _judge_trials(cand, usable, config, out)
    if ran["extra_threads"] > 0:
        raise Stop(Status.timing_anomaly, f"{ran['extra_threads']} thread(s) left running after forward",
                   [Finding(rule="background-threads", severity="reject",
                            message="threads outlive forward: their work escapes timing", evidence=str(ran["extra_threads"]))])

    with out.phase("checks"):  # kernel census and peak memory (CUDA)
        if cand.device.startswith("cuda"):
            out.census = _call(cand, "census", config.run_timeout_s, Status.runtime_error, "kernel census",
                               host_inputs=usable[0]["inputs"])
            if out.census["custom"] == 0:
                names = ", ".join(k["name"][:60] for k in out.census["kernels"][:5]) or "none"
                raise Stop(Status.no_custom_kernel, f"no kernel of the candidate's own ran (kernels seen: {names})",
                           [Finding(rule="no-custom-kernel", severity="reject",
                                    message="every kernel that ran came from ATen/cuBLAS/cuDNN/CuPy", evidence=names)])
            if out.census["library"] > 0:
                lib = [k["name"][:80] for k in out.census["kernels"] if not k["custom"]]
                out.findings.append(Finding(rule="library-kernels", severity="flag",
                                            message=f"{out.census['library']} library kernel launch(es) beside the custom ones",
                                            evidence="; ".join(lib[:5])))
            out.memory = _peak_memory(cand, ref, usable[0]["inputs"], config)
    if timing:
        from kernelmosaic.verify.timed import time_candidate

        with out.phase("timing"):
            out.timing = time_candidate(cand, ref, refdata, config, out, extra, exclusive)


def _judge_trials(cand: Worker, usable: list[dict], config: VerifyConfig, out: Outcome) -> tuple[dict, list[float]]:
    """Every trial's outputs sent here and compared here, then the refill check; returns the run's reply and, per
    output, the most budget any trial needed above atol + rtol·|r|."""
    atol, rtol = config.tolerances()
    with out.phase("correctness"):
        ran = _call(cand, "run", config.run_timeout_s, Status.runtime_error, "running forward",
                    trials=[tr["inputs"] for tr in usable],
                    poison_sizes=[(n + 3) // 4 for n in output_nbytes(usable[0]["outputs"])])
    with out.phase("compare"):  # the trials' outputs against the oracle, the refill check
        corr = out.correctness
        corr.trials, corr.atol, corr.rtol, corr.seed = len(usable), atol, rtol, config.seed
        corr.distributions = sorted({tr["distribution"] for tr in usable})
        extra: list[float] = []  # per output: the most budget any trial needed above atol + rtol·|r|
        for k, (tr, got) in enumerate(zip(usable, ran["trials"], strict=True)):
            cmp = compare_outputs(tr["outputs"], got["outputs"], atol, rtol, tr.get("oracle"))
            extra = [max(a, b) for a, b in zip(extra, cmp.extra, strict=False)] + cmp.extra[len(extra):]
            corr.max_abs_error = max(corr.max_abs_error, cmp.max_abs)
            corr.max_rel_error = max(corr.max_rel_error, cmp.max_rel)
            corr.error_vs_fp64 = round(max(corr.error_vs_fp64, cmp.budget_used), 4)
            corr.reference_error_vs_fp64 = round(max(corr.reference_error_vs_fp64, cmp.reference_budget_used), 4)
            if not cmp.ok:
                corr.detail = f"trial {k} ({tr['distribution']} inputs): {cmp.detail}"
                raise Stop(cmp.status, f"wrong result on trial {k} of {len(usable)}: {cmp.detail}")
            if got["mutated"] and not tr["mutates_inputs"]:
                raise Stop(Status.integrity_violation, f"forward modified its input(s) {got['mutated']}; the reference does not",
                           [Finding(rule="input-mutation", severity="reject", message="the candidate wrote into its inputs",
                                    evidence=f"inputs {got['mutated']} changed on trial {k}")])
            if "repeat" in got:  # both runs within the budget of the oracle, and each within it of the other
                again = compare_outputs(got["outputs"], got["repeat"], atol, rtol, tr.get("oracle"))
                if not again.ok:
                    raise Stop(Status.nondeterministic, f"two runs on the same inputs disagree: {again.detail}")
            corr.passed += 1
        _integrity(ran["integrity"], "forward")
        _refill_check(cand, usable, config)
    return ran, extra


def _peak_memory(cand: Worker, ref: Worker, host_inputs: list, config: VerifyConfig) -> MemoryUse | None:
    """Peak device memory of one forward of the candidate and of the reference on the same inputs (a metric)."""
    mine = _call(cand, "peak_memory", config.run_timeout_s, Status.runtime_error, "measuring peak memory",
                 host_inputs=host_inputs)
    _integrity(mine["integrity"], "forward")
    theirs = _call(ref, "peak_memory", config.run_timeout_s, Status.bad_problem, "the reference's peak memory",
                   inputs=host_inputs)
    if mine["peak_bytes"] is None or theirs["peak_bytes"] is None:
        return None
    c, r = int(mine["peak_bytes"]), int(theirs["peak_bytes"])
    return MemoryUse(candidate_peak_bytes=c, reference_peak_bytes=r, ratio=round(c / r, 4) if r > 0 else None)


def _refill_check(cand: Worker, usable: list[dict], config: VerifyConfig) -> None:
    """The trials again, written in place into one set of input buffers without moving their version counters: an
    output cached on the buffers' identity goes stale (`stale-buffer-check`)."""
    atol, rtol = config.tolerances()
    res = _call(cand, "refill", config.run_timeout_s, Status.runtime_error, "running forward on refilled buffers",
                trials=[tr["inputs"] for tr in usable],
                poison_sizes=[(n + 3) // 4 for n in output_nbytes(usable[0]["outputs"])])
    _integrity(res["integrity"], "forward")
    for k, (tr, got) in enumerate(zip(usable, res["outputs"], strict=True)):
        cmp = compare_outputs(tr["outputs"], got, atol, rtol, tr.get("oracle"))
        if not cmp.ok:
            detail = f"trial {k}'s inputs written into the buffers of trial 0 (versions {res['versions'][k]}): {cmp.detail}"
            raise Stop(Status.output_mismatch, f"a stale result on refilled input buffers: {detail}",
                       [Finding(rule="stale-buffer-check", severity="reject",
                                message="the output must follow the inputs' values, not the buffers' identity",
                                evidence=detail)])


ESCAPED_FLOOR_MS, ESCAPED_SHARE = 0.03, 0.15
"""Work still running once the candidate's stream is done, by more than max(floor, share × stream time) beyond a
no-op's synchronisation cost, is work the stream-ordered time did not contain. The window is on the legacy default
stream, which waits for every blocking stream: only work on a non-blocking stream can trail it (timing.py)."""


def escaped_work(stream_ms: float, escaped_ms: float) -> Finding | None:
    """A finding when this process's device work trails the candidate's stream (median over the timed calls)."""
    if escaped_ms <= max(ESCAPED_FLOOR_MS, ESCAPED_SHARE * stream_ms):
        return None
    return Finding(rule="timing-escaped-work", severity="reject",
                   message=f"timing-escaped-work: the candidate's work went on running {escaped_ms:.3f} ms after its "
                           f"stream finished ({stream_ms:.3f} ms): work on a non-blocking side stream escapes the "
                           "stream-ordered time. Launch on the current stream (a bare `kernel<<<grid, block>>>` or "
                           "`at::cuda::getCurrentCUDAStream()` is accepted), or make the current stream wait for the "
                           "side stream before returning (`cudaStreamWaitEvent`, `torch.cuda.current_stream()"
                           ".wait_stream(side)`)",
                   evidence=f"median trailing {escaped_ms:.4f} ms beyond a no-op's synchronisation, "
                            f"limit {max(ESCAPED_FLOOR_MS, ESCAPED_SHARE * stream_ms):.4f} ms")
