"""The Verifier: judges (problem, candidate) pairs on a set of devices and returns Verdicts.

One slot per device holds a long-lived reference worker (its setup and reference outputs are cached per problem)
and a warm spare candidate worker; every candidate gets a fresh process, so nothing one candidate did can touch
the next verdict. Compiles run on CPU workers outside the device slots, so they overlap with judging.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from kernelmosaic.contracts.hashing import candidate_hash, problem_hash
from kernelmosaic.contracts.results import CompileResult, DevicePeaks, ProfileReport
from kernelmosaic.contracts.verdict import Correctness, Env, Robustness, Status, Verdict, WorkerReuse
from kernelmosaic.paths import private_dir
from kernelmosaic.scrub import scrub
from kernelmosaic.verify.alone import AloneGate
from kernelmosaic.verify.baseline_run import compile_baseline
from kernelmosaic.verify.baselines import baseline_key
from kernelmosaic.verify.binary_check import first_reject, symbol_findings
from kernelmosaic.verify.compile_stage import (
    BuildBusy,
    cached_compile,
    compile_stage,
    spare_compile_worker,
    wait_for_build,
)
from kernelmosaic.verify.config import Policy, TimingProfile, VerifyConfig
from kernelmosaic.verify.custom_work import check_custom_work
from kernelmosaic.verify.device_memory import (
    admission,
    attribute,
    device_usage,
    free_bytes,
    go_alone,
    retry_reason,
)
from kernelmosaic.verify.devlock import CpuHold, DeviceHold, device_hold
from kernelmosaic.verify.job import Job, accepted_message, finish
from kernelmosaic.verify.judge import judge_candidate
from kernelmosaic.verify.judgement import Stop
from kernelmosaic.verify.lookahead import run_lookahead
from kernelmosaic.verify.physics import check_speed_of_light
from kernelmosaic.verify.pool import Worker, WorkerDied, WorkerError
from kernelmosaic.verify.problem_shapes import alternatives_to_judge, problem_at_shapes
from kernelmosaic.verify.profile import ncu_digest, report_from_verdict
from kernelmosaic.verify.reference_data import PeaksReply, reference_reply
from kernelmosaic.verify.requests import read_input
from kernelmosaic.verify.robustness import Alternative, check_robustness
from kernelmosaic.verify.sanitize import run_sanitizer, sanitizer_plan
from kernelmosaic.verify.scratch import sweep_stale_scratch
from kernelmosaic.verify.settings import require_device
from kernelmosaic.verify.slot import (
    DeviceSlot,
    InputError,
    Spares,
    arch_env,
    close_all,
    driver_version,
    side_by_side,
)
from kernelmosaic.verify.slot_pool import SlotPool
from kernelmosaic.verify.stopping import raise_if_stopped
from kernelmosaic.verify.strength import settings_used
from kernelmosaic.verify.task_audit import audit_reference

__all__ = ["Verifier", "InputError", "visible_devices"]

log = logging.getLogger(__name__)


# Static findings that are plain failures rather than cheating keep the status a run would have given.
_STATIC_STATUS = {"syntax-error": Status.compile_error, "missing-modelnew": Status.load_error,
                  "no-custom-kernel-defined": Status.no_custom_kernel, "no-kernel-launched": Status.no_custom_kernel}


def visible_devices(kind: str) -> list[str]:
    if kind == "cpu":
        return ["cpu"]
    import torch

    return [f"cuda:{i}" for i in range(torch.cuda.device_count())] or ["cuda:0"]


class Verifier:
    def __init__(self, config: VerifyConfig | None = None, devices: list[str] | None = None) -> None:
        self.config = config or VerifyConfig()
        if devices is None:  # given devices are the caller's word (a Ray judge names its own), else ask torch
            require_device(self.config)
        private_dir(self.config.cache_dir)
        sweep_stale_scratch()  # folders of workers killed with their verifier, once per process
        per_device = self.config.judges_per_gpu if self.config.device == "cuda" else 1
        self._all = []
        for device in devices or visible_devices(self.config.device):  # one set of spares per device, all its slots'
            spares = Spares(self.config.spare_workers * per_device, per_device)
            self._all += [DeviceSlot(device, self.config, spares) for _ in range(per_device)]
        self._slots = SlotPool(self._all)
        self._gates = {slot.device: AloneGate() for slot in self._all}
        # compiles happen before a device slot is taken, so they overlap with judging on the devices
        self._peaks: DevicePeaks | None = None
        self._compile_gate = threading.BoundedSemaphore(self.config.lookahead_slots())
        self.served_by = ""
        """Set by the local verifier service (`service pid N`), recorded in every verdict's `workers`."""

    @property
    def device_count(self) -> int:
        """Device slots: judgements at once (`judges_per_gpu` per GPU, one on the CPU)."""
        return len(self._all)

    def __enter__(self) -> Verifier:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Every slot's workers, reaped side by side (`close_all`)."""
        close_all([w for slot in self._all for w in slot.release_workers()])

    def ready_spares(self) -> int:
        """Every slot's next spare candidate worker brought up on its device now, all slots at once
        (`DeviceSlot.ready_spare`, the device held shared), so the next judgement's hand-out is immediate whichever
        slot it takes. The verifier service calls it after answering a request; a request that comes meanwhile waits
        at its hand-out for the rest of that slot's bring-up. Returns how many spares are up."""

        def ready(slot: DeviceSlot) -> bool:
            with device_hold(slot.device, self.config) as hold, hold.shared():
                return slot.ready_spare()

        return sum(side_by_side(ready, self._all))

    def compile(self, candidate: Path) -> CompileResult:
        source = read_input(candidate, "candidate")
        status, message, info = self._gated_compile(str(Path(candidate).resolve()), source)
        return CompileResult(ok=status == Status.accepted, status=status, message=message or "compiled", info=info)

    def device_peaks(self) -> DevicePeaks:
        """Measured ceilings of the first device (copy bandwidth, fp32 and bf16 matrix rates), cached."""
        if self._peaks is None:
            slot = self._slots.take()
            try:
                with device_hold(slot.device, self.config) as hold, hold.exclusive():
                    self._measure_peaks(slot)
            finally:
                self._slots.put(slot)
        return self._peaks

    def _measure_peaks(self, slot: DeviceSlot) -> DevicePeaks:
        if self._peaks is None:
            try:
                if slot.ref is None or not slot.ref.alive:
                    slot.ref = slot.new_worker("reference")
                r = reference_reply(PeaksReply, slot.ref.call("peaks", 300.0), "peaks")
                self._peaks = DevicePeaks(bandwidth_gbps=r.bandwidth_gbps, fp32_tflops=r.fp32_tflops,
                                          bf16_tflops=r.bf16_tflops, measured=True)
            except (WorkerDied, WorkerError, Stop) as exc:
                log.warning("could not measure device peaks: %s", exc)
                self._peaks = _peaks_or_nominal(slot.device, str(exc)[:300] or type(exc).__name__)
        return self._peaks

    def profile(self, problem: Path, candidate: Path) -> ProfileReport:
        """Which kernels ran (census) and, on CUDA where `ncu` works, a per-kernel metric digest."""
        verdict = self.verify(problem, candidate, timing=False)
        if not verdict.accepted:
            return ProfileReport(message=f"not profiled: {verdict.status.value}: {verdict.message}")
        kernels = report_from_verdict(verdict)
        if self.config.device != "cuda":
            return ProfileReport(kernels=kernels, message="CPU device: no GPU kernels to profile")
        # ncu replays the kernels on the first visible GPU: shared, like a sanitizer run, so no timing overlaps it
        with device_hold(self._all[0].device, self.config) as hold, hold.shared():
            digest, note = ncu_digest(Path(problem).resolve(), Path(candidate).resolve(), "cuda", arch_env(),
                                      self.config.cache_dir)
        return ProfileReport(kernels=kernels, ncu_metrics=digest, message=note)

    def verify(self, problem: Path, candidate: Path, *, timing: bool | None = None,
               sanitize: bool | None = None, policy: Policy | None = None,
               alternatives: Sequence[Alternative] = (), timing_profile: TimingProfile | None = None) -> Verdict:
        """Judge `candidate` against `problem`; `timing` and `sanitize` override the config for this call (the
        agent times on benchmark() and sanitizes the final solution only); `policy` overrides the run's policy (a
        task's own); `alternatives` are the task at other shapes/dtypes, judged after timing (`robustness`);
        `timing_profile` picks `quick` (iterations) or `full` timing for this call."""
        job = self.start(problem, candidate, timing=timing, sanitize=sanitize, policy=policy,
                         alternatives=alternatives, timing_profile=timing_profile)
        self.compile_job(job)
        return self.judge(job)

    def verify_many(self, pairs: Sequence[tuple[Path, Path]], **options) -> Iterator[tuple[int, Verdict]]:
        """Judge many pairs with compiles ahead of judgement (`lookahead`); yields (index, verdict) as each ends."""
        return run_lookahead(self, pairs, options)

    def start(self, problem: Path, candidate: Path, *, timing: bool | None = None, sanitize: bool | None = None,
              policy: Policy | None = None, alternatives: Sequence[Alternative] = (),
              timing_profile: TimingProfile | None = None) -> Job:
        """Read and hash the inputs, run the static checks and look the build up in the cache (no worker)."""
        problem_src, candidate_src = read_input(problem, "problem"), read_input(candidate, "candidate")
        sized = problem_at_shapes(Path(problem), self.config)  # one shape rule for every entry point
        if sized.path != Path(problem):
            problem, problem_src = sized.path, read_input(sized.path, "problem")
        alternatives, alt_note = alternatives_to_judge(problem_src, alternatives, self.config)
        alt_shas = [problem_hash(read_input(a.problem, f"alternative {a.label!r}")) for a in alternatives]
        update = {k: v for k, v in (("policy", policy), ("timing_profile", timing_profile)) if v is not None}
        config = self.config.model_copy(update=update) if update else self.config
        verdict = Verdict(accepted=False, status=Status.crash, message="", problem_sha256=problem_hash(problem_src),
                          candidate_sha256=candidate_hash(candidate_src), env=Env(precision=self.config.precision),
                          policy=config.policy, robustness=Robustness(note=alt_note), shapes=sized.note)
        job = Job(problem=Path(problem).resolve(), candidate=Path(candidate).resolve(), candidate_src=candidate_src,
                  config=config, timing=self.config.timing if timing is None else timing,
                  sanitize=self.config.sanitize if sanitize is None else sanitize, alternatives=list(alternatives),
                  alt_shas=alt_shas, verdict=verdict)
        verdict.settings = settings_used(config, job.timing, job.sanitize)
        try:
            if self.config.static_checks:
                from kernelmosaic.verify.static import analyze_candidate
                from kernelmosaic.verify.static.rules import reject_message

                static = config.static_policy().with_problem_imports(problem_src)
                job.findings += analyze_candidate(candidate_src, str(candidate), static)
                rejects = [f for f in job.findings if f.severity == "reject"]
                if rejects and rejects[0].rule in _STATIC_STATUS:
                    raise Stop(_STATIC_STATUS[rejects[0].rule], rejects[0].message)
                if rejects:
                    first = rejects[0]
                    raise Stop(Status.static_reject, reject_message(first.rule, first.message, first.evidence))
            if (done := cached_compile(candidate_src, self.config)) is not None:
                self._compiled(job, done, 0.0)
        except Stop as stop:
            job.stop = stop
        return job

    def compile_job(self, job: Job, worker: Worker | None = None) -> None:
        """Build the candidate's extensions in a CPU worker (`worker`: one launched ahead, `spare_compile_worker`),
        unless `start` already settled it."""
        if job.stop is not None or job.compiled:
            if worker is not None:
                worker.kill()
            return
        started: list[float] = []
        done = self._gated_compile(str(job.candidate), job.candidate_src, lambda: started.append(job.mark("compile")),
                                   job.compile_nice, worker)
        raise_if_stopped()  # a compile cut by Ctrl-C is no compile error of the candidate's
        self._compiled(job, done, time.perf_counter() - started[0])

    def _gated_compile(self, candidate: str, source: str, on_start=lambda: None, nice: int = 0,
                       worker: Worker | None = None) -> tuple:
        """`compile_stage` holding a place of the compile gate only while its worker works: a first try that finds
        an extension being built by another compile (candidates sharing a source) lets its place go, waits on that
        build outside the gate, then tries once more, waiting inside its worker if it must. Waiting inside the gate
        would hold places idle: on the H200, five of its eight places were held by compiles waiting on one shared
        build while other candidates queued."""
        with self._compile_gate:
            on_start()  # the `compile` phase starts with the first place in the gate
            try:  # `compile_stage` takes `worker` either way
                return compile_stage(candidate, source, self.config, wait=False, worker=worker, nice=nice)
            except BuildBusy as busy:
                folder = busy.build_dir
        retry = spare_compile_worker(self.config, nice)  # loads torch while the build runs, not after it
        try:
            wait_for_build(folder, self.config.compile_timeout_s)
        except BaseException:
            retry.kill()
            raise
        with self._compile_gate:
            return compile_stage(candidate, source, self.config, worker=retry)

    @staticmethod
    def _compiled(job: Job, done: tuple, seconds: float) -> None:
        status, message, job.verdict.compile = done
        job.out.phase_seconds["compile"] = seconds
        job.compiled = True
        if status != Status.accepted:
            job.stop = Stop(status, message)
        elif job.config.static_checks and job.verdict.compile.symbols:  # the binaries' own calls, under the policy
            found = symbol_findings(job.verdict.compile.symbols, job.config.static_policy())
            job.findings += found
            if (reject := first_reject(found)) is not None:
                job.stop = Stop(Status.static_reject, reject)

    def prepare(self, job: Job) -> None:
        """Set `job`'s problem up on a free device slot ahead of its judgements (`verify_many` does, for a batch's
        first problems, while their candidates compile): the reference worker's set-up and trials and, when the job
        times, the `torch.compile` baseline built, timed and cached. Warms the slot's spare workers too. A problem
        that fails here fails again in its judgements, which report it; nothing is decided here."""
        if job.stop is not None:
            return
        sha, config = job.verdict.problem_sha256, job.config
        try:
            with self._on_slot(sha) as (slot, hold):
                refdata = slot.reference(str(job.problem), sha)
                if job.timing and config.compile_baseline and config.baseline_cache:
                    key = baseline_key(sha, refdata.env, slot.device, config)
                    compile_baseline(slot.ref, int(refdata.env.get("l2_bytes", 0)), config, key, hold.exclusive)
        except Stop as stop:
            log.info("preparing %s ahead of its judgements: %s", job.problem, stop.message)

    @contextlib.contextmanager
    def _on_slot(self, problem_sha: str, alone: bool = False) -> Iterator[tuple[DeviceSlot, DeviceHold | CpuHold]]:
        """The best free slot for `problem_sha` with the device held for it (`devlock.device_hold`; every worker call of the
        slot takes it shared); afterwards the slot's spares are topped up (after any timing: on the CPU a spare
        loading torch would skew host timers) and the slot goes back to the pool. `alone`: no other judgement of this
        Verifier on the device meanwhile, and its idle slots' references gone from it (`verify/alone.py`)."""
        slot = self._slots.take(problem_sha)
        try:
            with self._gates[slot.device].hold(exclusive=alone), device_hold(slot.device, self.config) as hold:
                if alone and (n := self._slots.release_idle(slot.device)):
                    log.info("%s held alone: %d idle slot(s) gave their reference workers up", slot.device, n)
                slot.use_hold(hold)
                yield slot, hold
        finally:
            slot.use_hold(None)
            slot.warm_spare()
            self._slots.put(slot)

    def judge(self, job: Job) -> Verdict:
        """Judge a compiled job on a free device slot and assemble its verdict."""
        if job.stop is None:
            try:
                self._judge(job)
            except Stop as stop:
                job.stop = stop
        raise_if_stopped()  # a judgement cut by Ctrl-C has no verdict to record
        return finish(job)

    def _judge(self, job: Job) -> None:
        verdict, out = job.verdict, job.out
        slot = self._judge_on_slot(job)
        verdict.status, verdict.message = Status.accepted, accepted_message(out, verdict)
        tools, plan = sanitizer_plan(slot.device, job.sanitize, self.config.race_check, job.candidate_src)
        verdict.sanitizer = {"ran": False, "skipped": plan}
        if tools:
            # shared once the tools' targets are set up: their kernels must not land in another candidate's timing,
            # but they may overlap judgements
            with device_hold(slot.device, self.config) as hold, out.phase("sanitize"):
                found, report = run_sanitizer(job.problem, job.candidate, arch_env(), self.config.cache_dir,
                                              self.config.sanitize_timeout_s, tools, gate=hold.shared,
                                              gated=self.config.sanitize_gated)
                out.phase_seconds["sanitize_lock_wait"] = hold.waited
            verdict.sanitizer = {"plan": plan, **report}
            out.findings += found

    def _judge_on_slot(self, job: Job) -> DeviceSlot:
        """Everything of a judgement that needs the device slot (raises Stop); returns the slot it used. Out of device
        memory with the device shared: judged once more alone; alone: the problem's or the candidate's (device_memory)."""
        alone, fresh = "", False
        while True:
            try:
                return self._judge_attempt(job, alone, fresh)
            except _GoAlone as go:  # its reference stays set up in the slot, which the next attempt takes first
                alone, fresh = str(go), False
                job.out.__init__(Correctness(), phase_seconds={"admission": job.out.phase_seconds.get("judge", 0.0)})
            except Stop as stop:
                retry = "" if alone or job.out.device_alone else retry_reason(stop)
                if not retry:
                    raise attribute(stop, job.out.reference_memory, lambda: device_usage(job.device)) from stop
                log.info("%s: %s", job.candidate, alone := retry)  # the same Outcome, emptied (callers hold it)
                fresh = True
                job.out.__init__(Correctness(), phase_seconds={"oom_retry": job.out.phase_seconds.get("judge", 0.0)})

    def _judge_attempt(self, job: Job, alone: str, fresh: bool) -> DeviceSlot:
        """One judgement on a slot; `alone`: why it holds the device alone from its start ("" = it does not; raises
        `_GoAlone` when it would not fit beside the others); `fresh`: its reference worker starts anew too."""
        verdict, out, config = job.verdict, job.out, job.config
        with self._on_slot(verdict.problem_sha256, alone=bool(alone)) as (slot, hold), contextlib.ExitStack() as whole:
            job.device = slot.device
            t = job.mark("judge")
            try:
                if alone:
                    if fresh:  # after an out-of-memory: the reference worker's allocator cache and kept problems go
                        slot.release_reference()
                    go_alone(whole, hold, job.out, job.verdict, alone)
                with out.phase("reference"):
                    refdata = slot.reference(str(job.problem), verdict.problem_sha256)
                out.reference_memory = refdata.memory
                if not hold.alone and (why := admission(refdata, free_bytes(slot))):
                    raise _GoAlone(why)
                verdict.workers = WorkerReuse(reference_pid=slot.ref.proc.pid, reference_reused=slot.reference_reused,
                                              served_by=self.served_by)
                out.findings += audit_reference(refdata, *self.config.tolerances())
                verdict.env = Env(**{k: v for k, v in refdata.env.items() if k in Env.model_fields},
                                  precision=self.config.precision,
                                  driver=driver_version() if slot.device.startswith("cuda") else "",
                                  gpu_index=slot.device.partition(":")[2] or ("0" if slot.device == "cuda" else ""))
                if config.baseline_cache:
                    out.baseline_key = baseline_key(verdict.problem_sha256, refdata.env, slot.device, config)
                with out.phase("worker_start"):
                    cand = slot.take_candidate_worker()
                verdict.env.isolation = sorted({*cand.isolation, *slot.ref.isolation})
                verdict.workers.candidate_prestarted = slot.spare_used
                verdict.workers.candidate_ready_ahead = slot.spare_was_ready
                try:
                    judge_candidate(cand, slot.ref, refdata, str(job.candidate), config, job.timing, out, hold.exclusive)
                    if out.timing and slot.device.startswith("cuda"):
                        if self._peaks is None:  # measured once per Verifier, on an idle device
                            with hold.exclusive():
                                self._measure_peaks(slot)
                        out.findings += check_speed_of_light(refdata, out.timing, self._peaks)
                    with out.phase("custom_work"):
                        verdict.custom = check_custom_work(cand, refdata, config, out.census, out.findings, slot.ref,
                                                           out.watched_calls)
                    if job.alternatives:  # in the judged worker: its Python, torch and extensions already loaded
                        with out.phase("robustness"):
                            check_robustness(slot, str(job.candidate), job.alternatives, job.alt_shas, config,
                                             verdict.robustness, out.findings, worker=cand)
                finally:
                    verdict.candidate_output_tail = scrub(cand.output_tail())
                    with out.phase("worker_end"):  # reaped before the device hold goes: its context is gone too
                        cand.kill()
            finally:
                out.phase_seconds["device_lock_wait"] = hold.waited
                out.phase_seconds["judge"] = time.perf_counter() - t
                if "device_alone" in out.phase_started:
                    out.phase_seconds["device_alone"] = time.time() - out.phase_started["device_alone"]
        return slot


class _GoAlone(Exception):
    """The judgement does not fit beside the others: it starts again holding the device alone (the message: why)."""


def _peaks_or_nominal(device: str, why: str) -> DevicePeaks:
    return DevicePeaks(bandwidth_gbps=0.0, fp32_tflops=0.0, bf16_tflops=0.0, measured=False,
                       note=f"measuring the peaks of {device} failed: {why}")
