"""A device slot (reference worker + spare candidate workers launched ahead); the limits every worker role gets.

The reference worker is long-lived: problems are trusted more than candidates, and its per-problem setup and
reference outputs are cached, so an agent that verifies twenty candidates for one task pays for them once.
"""

from __future__ import annotations

import functools
import logging
import os
import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor

from kernelmosaic.contracts.verdict import Status
from kernelmosaic.verify.config import VerifyConfig
from kernelmosaic.verify.judgement import Stop, device_oom, host_memory_hint
from kernelmosaic.verify.pool import Worker, WorkerDied, WorkerError, WorkerLimits
from kernelmosaic.verify.reference_data import ReferenceData, SkippedTrial, reference_setup, reference_trials
from kernelmosaic.verify.requests import InputError
from kernelmosaic.verify.sandbox.kmworker import cxx_lean, lean_unit, nvcc_split, unit_split
from kernelmosaic.verify.sandbox.kmworker.inputs import DISTRIBUTIONS

__all__ = ["DeviceSlot", "Spares", "InputError", "close_all", "side_by_side", "worker_limits", "gpu_arch",
           "driver_version", "arch_env", "nvidia_smi"]


log = logging.getLogger(__name__)

_CACHED_PROBLEMS = 4
"""Reference data kept per slot: a task's own problem and its alternatives."""


def worker_limits(config: VerifyConfig, device: str, role: str) -> WorkerLimits:
    gib = 1 << 30
    # Inductor compiles a graph's kernels in a pool of min(32, cores) processes by default, each importing torch:
    # on the 16-core H200 host up to 16 per `torch.compile` baseline, beside a batch's nvcc builds. One thread
    # builds the same kernels (the pool changes where they compile, not what). The cost: a graph of many kernels
    # (an L3 model) built alone compiles them one after another, once per problem (the baseline is cached on disk).
    # The user's own setting wins.
    env = {"TORCHINDUCTOR_COMPILE_THREADS": os.environ.get("TORCHINDUCTOR_COMPILE_THREADS", "1"),
           nvcc_split.SWITCH: "1" if config.split_nvcc else "0",
           lean_unit.SWITCH: "1" if config.lean_cuda_units else "0",
           unit_split.SWITCH: "1" if config.split_cuda_units else "0",
           cxx_lean.SWITCH: "1" if config.lean_binding_units else "0"}
    if role == "compile":
        env["CUDA_VISIBLE_DEVICES"] = ""  # compiles never touch the device...
        if config.device == "cuda" and "TORCH_CUDA_ARCH_LIST" not in os.environ:
            env.update(arch_env())  # ...so they are told which architecture to build for
    # Processes that run candidate code write only their scratch folder (their JIT caches are there too): the build
    # cache is written by builders alone (`compile_stage._build`, which names the one folder a builder may write).
    if device == "cpu" or role == "compile":
        return WorkerLimits(address_space_bytes=int(config.memory_limit_gb * gib), extra_env=env)
    return WorkerLimits(rss_bytes=int(config.host_rss_limit_gb * gib), extra_env=env)


def nvidia_smi(field: str, device: str = "cuda") -> str:
    """One field of `device`'s GPU (`cuda`: the first visible one; `cuda:N`: the Nth visible one), read without
    initialising CUDA in this process ("" without a GPU)."""
    visible = [v.strip() for v in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if v.strip()]
    index = int(device.partition(":")[2] or 0)
    gpu = visible[index] if index < len(visible) else str(index)
    try:
        out = subprocess.run(["nvidia-smi", "-i", gpu, f"--query-gpu={field}", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=30).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return ""
    return out[0] if out else ""


@functools.cache
def gpu_arch() -> str:
    """Compute capability of the first visible GPU, e.g. `9.0`."""
    return nvidia_smi("compute_cap")


@functools.cache
def driver_version() -> str:
    return nvidia_smi("driver_version")


@functools.cache
def arch_env() -> dict[str, str]:
    """`TORCH_CUDA_ARCH_LIST` for processes that build or load CUDA code without seeing the GPU themselves."""
    return {"TORCH_CUDA_ARCH_LIST": gpu_arch()} if gpu_arch() else {}


class Spares:
    """The spare candidate workers of one device, shared by its slots: a slot that judges request after request (every
    request of one problem goes to the slot that has its reference set up) takes the others' spares too, instead of
    waiting for its own to load torch (with spares per slot, on the H200 (2026-12-03) three of six back-to-back warm
    verifies waited 1.8-4.5 s for a spare of their slot while the other slots' spares sat loaded)."""

    def __init__(self, size: int, slots: int = 1) -> None:
        self.size, self.slots = size, slots
        """How many to keep launched on a GPU (`spare_workers` for each slot sharing them); how many slots share them:
        at most that many are kept up on the device ahead (`DeviceSlot.ready_spare`)."""
        self.workers: list[Worker] = []
        """Launched ahead, oldest first (Python and torch loading or loaded; the first may be up on the device,
        `DeviceSlot.ready_spare`)."""
        self.lock = threading.RLock()
        """Held while they are handed out, topped up or brought up (`Verifier.ready_spares` runs beside judgements)."""


class DeviceSlot:
    def __init__(self, device: str, config: VerifyConfig, spares: Spares | None = None) -> None:
        """`spares`: shared with the other slots of the same device (`Verifier`); default the slot's own."""
        self.device, self.config = device, config
        self.ref: Worker | None = None
        self._data: dict[tuple, ReferenceData] = {}
        self._loaded: tuple | None = None
        self._share = spares or Spares(config.spare_workers)
        self.reference_reused = False
        """The last `reference()` found the problem already set up."""
        self.spare_used = False
        """The last `take_candidate_worker()` handed out a worker started beforehand."""
        self.spare_was_ready = False
        """...one already up on the device (`ready_spare`), taken without waiting for its bring-up to end."""
        self.hold = None
        """The running judgement's hold on the device (devlock.DeviceHold): its workers take it around each call."""

    def new_worker(self, role: str) -> Worker:
        worker = Worker(role, self.device, worker_limits(self.config, self.device, role),
                        keep_scratch=self.config.keep_scratch)
        worker.start()
        worker.hold = self.hold
        return worker

    def use_hold(self, hold) -> None:
        """The running judgement's hold (None: the judgement is over) for the slot's workers: the reference worker
        now, every worker started or handed out from here on."""
        self.hold = hold
        if self.ref is not None:
            self.ref.hold = hold

    def reference(self, problem: str, sha: str, precision: str | None = None, trials: int | None = None) -> ReferenceData:
        """The problem set up in the reference worker, with its trials' inputs and outputs (cached per problem,
        precision and trial count; a problem set up again after another one keeps its cached trials). A problem whose
        trials exceed `large_output_bytes` keeps only their description here (`ReferenceData.large`): this process
        then holds nothing of output size for it."""
        c = self.config
        precision, n_trials = precision or c.precision, trials or c.trials
        key = (sha, problem, c.seed, n_trials, precision)
        self.reference_reused = self.ref is not None and self.ref.alive and self._loaded == key
        if self.reference_reused:
            return self._data[key]
        if self.ref is None or not self.ref.alive:
            self._data.clear()
            self.ref = self.new_worker("reference")
        self._loaded = None
        try:
            # `restored`: the worker kept it set up (the size check's problem came between two judgements of this one)
            self.reference_reused, setup = reference_setup(
                self.ref.call("setup", c.init_timeout_s + c.load_timeout_s, problem=problem, seed=c.seed,
                              precision=precision, sha=sha, known=key in self._data), problem)
            if key in self._data:  # same seed, same weights and inputs: the cached trials still hold
                if setup is not None:
                    self._data[key].setup = setup
            elif setup is None:
                raise Stop(Status.bad_problem, f"problem {problem}: the reference worker sent no set-up")
            else:
                seeds = [c.seed + k for k in range(n_trials)]
                dists = [DISTRIBUTIONS[k % len(DISTRIBUTIONS)] for k in range(n_trials)]
                made = reference_trials(self.ref.call("trials", c.run_timeout_s, seeds=seeds, distributions=dists,
                                                      large_bytes=c.large_output_bytes), problem)
                data = ReferenceData(setup=setup, trials=made.trials, env=self.ref.env, large=made.large,
                                     memory=made.memory)
                if not data.usable:
                    why = sorted({t.why for t in made.trials if isinstance(t, SkippedTrial)})
                    raise Stop(Status.bad_problem, f"problem {problem}: no usable trial: {'; '.join(why)[:400]}")
                self._data[key] = data
                while len(self._data) > _CACHED_PROBLEMS:
                    self._data.pop(next(iter(self._data)))
        except (WorkerDied, WorkerError) as exc:
            self._data.pop(key, None)
            if self.ref is not None:
                self.ref.kill()
                self.ref = None
            detail = exc.detail if isinstance(exc, WorkerDied) else f"{exc.error.get('type')}: {exc.error.get('message', '')[:400]}"
            oom = "reference_setup" if isinstance(exc, WorkerError) and device_oom(exc.error) else ""
            raise Stop(Status.bad_problem, f"problem {problem}: {host_memory_hint(detail, c.memory_limit_gb)}",
                       oom=oom) from exc
        self._loaded = key
        return self._data[key]

    def release_reference(self) -> None:
        """The reference worker goes (its device memory with it: allocator cache, kept problems); the next
        `reference()` starts a fresh one and sets the problem up again."""
        if self.ref is not None:
            self.ref.kill()
            self.ref = None
        self._loaded = None

    def holds(self, problem_sha: str) -> bool:
        """The reference worker is up with this problem set up (a judgement of it here skips the set-up)."""
        return bool(problem_sha) and self._loaded is not None and self._loaded[0] == problem_sha and \
            self.ref is not None and self.ref.alive

    @property
    def _spares(self) -> list[Worker]:
        return self._share.workers

    @property
    def _spare_lock(self) -> threading.RLock:
        return self._share.lock

    def has_spare(self) -> bool:
        return any(w.alive for w in self._spares)

    def take_candidate_worker(self) -> Worker:
        """A fresh candidate worker: the oldest live spare (it has loaded Python and torch, or is furthest along),
        brought up on the device now, else a new one. On a GPU the spares are topped up at once: loading Python and
        torch is host work beside this candidate's judgement, and a spare touches the device only when handed out or
        brought up ahead while the verifier is idle (`ready_spare`)."""
        waited = not self._spare_lock.acquire(blocking=False)  # a bring-up (`ready_spare`) still under way
        if waited:
            self._spare_lock.acquire()
        self._spare_lock.release()
        worker = self._hand_out_spare()
        self.spare_was_ready = self.spare_was_ready and not waited
        if worker is None:
            worker = self.new_worker("candidate")  # one that cannot start raises WorkerStartFailed: no verdict
        if self.device.startswith("cuda"):
            self.warm_spare()
        worker.hold = self.hold
        return worker

    def _hand_out_spare(self) -> Worker | None:
        """The oldest live spare, up on the device (None: no spare could be); dead ones go on the way. Each is taken
        off the shared list under its lock and brought up outside it: a spare still loading torch delays only this
        hand-out, not the other slots' (a bring-up by `ready_spare` runs under the lock, so none is brought up twice)."""
        worker: Worker | None = None
        was_ready = False
        while worker is None:
            with self._spare_lock:
                if not self._spares:
                    break
                spare = self._spares.pop(0)
            try:
                if spare.alive:
                    was_ready = spare.ready
                    spare.activate(self.config.load_timeout_s)
                    worker = spare
                    continue
            except WorkerDied:
                pass
            spare.kill()  # died waiting or starting: its process group and scratch folder go; the next spare
        self.spare_used = worker is not None
        self.spare_was_ready = self.spare_used and was_ready
        return worker

    def ready_spare(self) -> bool:
        """Bring a spare up on the device now (CUDA initialised, its role made), the first live one that is not up
        yet, so that a hand-out costs nothing: 0.66 s of a warm verify on the H200. Called once per slot
        (`Verifier.ready_spares`), it leaves one spare up per slot sharing them, at the front, where hand-outs take
        from. The caller holds the device shared (a context made during another judgement's timing would show in
        it); a hand-out meanwhile waits for the bring-up. True when a spare is up; a spare that died is left for
        `warm_spare` to replace."""
        with self._spare_lock:
            live = [w for w in self._spares if w.alive]
            if sum(w.ready for w in live) >= self._share.slots:  # one up per slot sharing them (each holds a context)
                return True
            for spare in live:
                if not spare.ready:
                    try:
                        spare.activate(self.config.load_timeout_s)
                        return True
                    except WorkerDied:
                        return False
            return bool(live)

    def warm_spare(self) -> None:
        """Top the device's spares up to their shared count (GPU: `spare_workers` per slot): each loads Python and
        torch and then waits without touching the device. On the CPU device at most one, launched only when the slot
        goes idle: a process loading torch beside a candidate timed on host timers would skew its numbers."""
        with self._spare_lock:
            for dead in [w for w in self._spares if not w.alive]:  # died while waiting: process group, scratch go
                dead.kill()
                self._spares.remove(dead)
            want = self._share.size if self.device.startswith("cuda") else min(self._share.size, 1)
            while len(self._spares) < want:
                spare = Worker("candidate", self.device, worker_limits(self.config, self.device, "candidate"),
                               keep_scratch=self.config.keep_scratch)
                try:
                    spare.spawn(defer_device=True)
                except OSError:
                    spare.kill()
                    return
                self._spares.append(spare)

    def close(self) -> None:
        """Every worker of the slot asked to exit and reaped side by side: a GPU worker's process takes a moment to
        release its CUDA context, and a batch's Verifier closes a dozen of them."""
        close_all(self.release_workers())

    def release_workers(self) -> list[Worker]:
        """The slot's workers, detached from it (the caller closes them)."""
        with self._spare_lock:
            workers = [w for w in (self.ref, *self._spares) if w is not None]
            self.ref = None
            self._spares.clear()  # shared: the first slot of the device released gives them all up
        return workers


def close_all(workers: list[Worker]) -> None:
    """`Worker.close` on each, concurrently."""
    side_by_side(Worker.close, workers)


def side_by_side(fn, items: list) -> list:
    """`fn` of each item, each in its own thread (in this one for a single item); the results in order."""
    if len(items) <= 1:
        return [fn(x) for x in items]
    with ThreadPoolExecutor(len(items), thread_name_prefix="km-side") as pool:
        return list(pool.map(fn, items))


