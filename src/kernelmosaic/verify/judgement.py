"""The parts of a judgement every phase shares: `Stop` (a phase's end, carrying the status), the worker call that
turns a worker's death or error into one, the judgement's `Outcome`, the checks of what a
worker reports, and the escaped-work rule. Runs in the trusted parent; `judge.py` is the flow that uses them."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from kernelmosaic.contracts.verdict import Census, Correctness, Finding, MemoryUse, Status, Timing
from kernelmosaic.verify.pool import Worker, WorkerDied, WorkerError

__all__ = ["host_memory_hint", "Stop", "Outcome", "Exclusive", "call", "call_on_candidate_data", "reported_data_finding",
           "integrity", "status_of_death", "status_of_error", "device_oom", "escaped_work", "ESCAPED_FLOOR_MS"]

Exclusive = Callable[[], contextlib.AbstractContextManager[float]]
"""Holds the device alone for a timing phase, yielding the seconds it waited for it (devlock.DeviceHold)."""

_DEATH = {"timeout": Status.timeout, "crash": Status.crash, "resource": Status.resource_error}


class Stop(Exception):
    def __init__(self, status: Status, message: str, findings: list[Finding] | None = None, oom: str = "") -> None:
        super().__init__(message)
        self.status, self.message, self.findings = status, message, findings or []
        self.oom = oom
        """Who ran out of device memory: `reference_setup` (setting the problem up or making its trials),
        `reference` (later in the judgement), `candidate`, `reference_host` (the reference worker killed for host
        memory on data from the candidate's process); "" when the stop is not an out-of-memory. The verifier retries
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


_HOST_MEMORY = ("can't allocate memory", "Cannot allocate memory", "MemoryError", "std::bad_alloc",
                "Thread creation failed", "unexpected pos")
"""Words of a host allocation failing under the worker's memory cap (torch's CPU allocator, Python, C++, libgomp
starting its threads, and torch's reader of a reply cut short by it)."""


def host_memory_hint(detail: str, limit_gb: float) -> str:
    """`detail` with, when it reads as host memory running out, what to do about it: the reference worker's address
    space is capped (`verify.memory_limit_gb`), and a problem at KernelBench's sizes may need more on a CPU."""
    if not any(word in detail for word in _HOST_MEMORY):
        return detail
    return (f"{detail} (host memory ran out: the reference worker is capped at verify.memory_limit_gb = {limit_gb:g} "
            "GiB; raise it with --set verify.memory_limit_gb=N where the machine has the memory, or judge the problem "
            "at smaller sizes)")


def status_of_error(error: dict, phase_status: Status) -> Status:
    if error.get("cuda"):
        return Status.cuda_error
    if error.get("oom"):
        return Status.resource_error
    if "Error building extension" in error.get("message", ""):
        return Status.compile_error
    return phase_status


@dataclass
class Outcome:
    correctness: Correctness
    findings: list[Finding] = field(default_factory=list)
    timing: Timing | None = None
    census: Census | None = None
    weights: dict = field(default_factory=dict)
    memory: MemoryUse | None = None
    phase_seconds: dict[str, float] = field(default_factory=dict)
    phase_started: dict[str, float] = field(default_factory=dict)
    """Wall-clock start (Unix seconds) of each phase's first entry."""
    baseline_key: str = ""
    """Where the `torch.compile` baseline of this problem is kept on disk ("" = not kept)."""
    device_alone: str = ""
    """Why this judgement holds the device alone ("" = shared with other judgements; `device_memory`)."""
    reference_memory: dict = field(default_factory=dict)
    """The reference's sizes (`reference_data.ReferenceData.memory`), for attributing an out-of-memory."""
    watched_calls: list[dict[str, int]] = field(default_factory=list)
    """Per timing round, the candidate's kernel calls in its watched timed call (`timed.py`, `custom_work`)."""

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Add the block's seconds to `phase_seconds[name]` when it completes (a phase cut short by a Stop is not
        recorded); a phase entered several times (one per timing round) adds up."""
        self.phase_started.setdefault(name, round(time.time(), 4))
        t = time.perf_counter()
        yield
        self.phase_seconds[name] = self.phase_seconds.get(name, 0.0) + time.perf_counter() - t


def call(worker: Worker, op: str, timeout: float, phase_status: Status, what: str, **args) -> dict:
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


def reported_data_finding(detail: str) -> Finding:
    return Finding(rule="candidate-reported-inputs", severity="reject",
                   message="candidate-reported-inputs: the inputs the candidate's process reported for a timed call are "
                           "not the ones it was given, or make the reference fail: forward changed them (rebinding "
                           "`x.data`, resizing or swapping an input) or the worker misreports them. Forward must leave its inputs' "
                           "storage and shape as given; returning new tensors (or writing into an output it allocates) "
                           "is accepted", evidence=detail[:800])


def call_on_candidate_data(ref: Worker, op: str, timeout: float, what: str, **args) -> dict:
    """A reference call on data that passed through the candidate's process (the inputs or seeds its timing reply
    reports): whatever makes the reference fail there is the candidate's doing (a forward that rebinds `x.data`,
    resizes its inputs, or reports inputs it was not given), a rejection, never `bad_problem`. The reference's own
    inputs are judged by `call` with `bad_problem`. A device OOM keeps its retry (`device_memory`)."""
    try:
        return ref.call(op, timeout, **args)
    except WorkerDied as exc:
        detail = f"the reference worker failed on {what}: {exc.detail}"
        # killed by the host (its out-of-memory killer on a crowded machine): judged once more alone, on a fresh
        # reference worker, before it is the candidate's
        raise Stop(status_of_death(exc), detail, [reported_data_finding(detail)],
                   oom="reference_host" if exc.kind == "resource" else "") from exc
    except WorkerError as exc:
        err = exc.error
        detail = f"the reference raised on {what}: {err.get('type')}: {err.get('message', '')[:400]}"
        if device_oom(err):
            raise Stop(Status.resource_error, detail, oom="reference") from exc
        raise Stop(Status.runtime_error, detail, [reported_data_finding(detail)]) from exc


def integrity(diffs: list[str], phase: str) -> None:
    if diffs:
        finding = Finding(rule="runtime-integrity", severity="reject",
                          message=f"the candidate changed the verifier's environment ({phase})", evidence="; ".join(diffs)[:800])
        raise Stop(Status.integrity_violation, f"integrity violation after {phase}: {diffs[0]}", [finding])


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
