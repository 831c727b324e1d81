"""The Verdict: the one typed judgement the verifier returns for a (problem, candidate) pair.

Its JSON form is the contract `kernelmosaic.verdict/1` described in docs/architecture.md; every other stage
(agent, store, sft, evaluate) reads this type and nothing else.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "SCHEMA",
    "Status",
    "WorkerReuse",
    "Severity",
    "Finding",
    "Correctness",
    "MemoryUse",
    "Timing",
    "Stat",
    "CompileInfo",
    "Env",
    "Verdict",
    "KernelStat",
    "Census",
    "WeightCopy",
    "KernelUse",
    "CustomWork",
    "AlternativeResult",
    "Robustness",
    "SettingsUsed",
]

SCHEMA = "kernelmosaic.verdict/1"


class Status(StrEnum):
    accepted = "accepted"
    static_reject = "static_reject"
    compile_error = "compile_error"
    load_error = "load_error"
    init_error = "init_error"
    runtime_error = "runtime_error"
    cuda_error = "cuda_error"
    crash = "crash"
    timeout = "timeout"
    resource_error = "resource_error"
    shape_mismatch = "shape_mismatch"
    dtype_mismatch = "dtype_mismatch"
    output_mismatch = "output_mismatch"
    nondeterministic = "nondeterministic"
    integrity_violation = "integrity_violation"
    timing_anomaly = "timing_anomaly"
    no_custom_kernel = "no_custom_kernel"
    bad_problem = "bad_problem"


Severity = Literal["reject", "flag"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class Finding(_Model):
    rule: str
    """Stable rule id, e.g. `torch-compute-in-forward`."""
    severity: Severity
    """`reject` makes the verdict fail; `flag` is recorded for people and filters."""
    message: str
    """One line: what was seen and why it matters."""
    evidence: str = ""
    """Where it was seen: `file:line: text`, a kernel name, a number."""


class Correctness(_Model):
    trials: int = 0
    """Trials attempted (each with fresh inputs)."""
    passed: int = 0
    """Trials whose outputs matched the reference within tolerance."""
    distributions: list[str] = Field(default_factory=list)
    """Input distributions used across trials (e.g. `given`, `signed`, `scaled`)."""
    max_abs_error: float = 0.0
    max_rel_error: float = 0.0
    atol: float = 0.0
    rtol: float = 0.0
    detail: str = ""
    """Where the first mismatch was, when there was one."""
    error_vs_fp64: float = 0.0
    """Worst error against a float64 reference, in tolerance units (fp32 tasks; 0 when none was computed)."""
    reference_error_vs_fp64: float = 0.0
    """The same for the fp32 reference itself: what honest fp32 arithmetic costs on this problem."""
    seed: int = 0
    """Base seed of the trials (random per verifier by default); passing it back reproduces the inputs."""


class Stat(_Model):
    median_ms: float
    q1_ms: float
    q3_ms: float
    samples: int
    rel_iqr: float = 0.0
    """Spread: (q3 - q1) / median."""


class Timing(_Model):
    candidate: Stat
    eager: Stat
    compile: Stat | None = None
    """`torch.compile` baseline; absent when it could not be built (see `compile_baseline_error`)."""
    compile_baseline_error: str = ""
    speedup_vs_eager: float
    speedup_vs_compile: float | None = None
    timer: Literal["cuda_events", "host"]
    l2_flush_bytes: int = 0
    input_sets: int = 0
    """Distinct fresh input sets rotated across timed calls."""
    escaped_ms: float = 0.0
    """Median time the device stayed busy after the candidate's stream finished, beyond the timing bracket's own
    cost (CUDA): work on other streams. Large values are `timing_anomaly`."""
    lead_us: float = 0.0
    """Longest spin kernel run before the candidate's timed calls (CUDA; 0 = none): it hides the host's launch
    latency, so the times are device time."""
    lead_short_calls: int = 0
    """Candidate's device-time calls whose host enqueue outlasted the lead (CUDA), so their window may hold host
    time; a sizeable share of `candidate.samples` means the host got busier than at warm-up."""
    lead_short_calls_eager: int = 0
    """The same count for eager's calls."""
    candidate_host: Stat | None = None
    """Host-inclusive call time: calls on an idle device (no lead kernel), so the window holds the host's launch
    cost too, as KernelBench's event timing does (CPU: the same host time as `candidate`)."""
    eager_host: Stat | None = None
    compile_host: Stat | None = None
    speedup_vs_eager_host: float | None = None
    """Speedup on host-inclusive time; `speedup_vs_eager` is on device time."""
    speedup_vs_compile_host: float | None = None
    timed_calls_checked: int = 0
    """Timed calls whose outputs were checked against the reference (by fingerprint, chosen after each round, and
    one per round in full), and the calls picked from every candidate wall-clock burst after its reply (16 and its
    last, by their projections)."""
    speedup_vs_eager_wall: float | None = None
    """Speedup over eager by the verifier's own clock, not the candidate's: eager's wall-clock burst time per call
    over the candidate's, each the parent's measure of back-to-back calls on inputs of their own, less the
    projections' cost (the reference's measure), median over rounds. Warm calls where `speedup_vs_eager` times cold
    ones, so the two differ for honest candidates too (launch-bound work overlaps back to back); nothing the
    candidate's process does to its timer or reply moves this one. None: not measured."""
    wall_ratio: float = 0.0
    """Worst round's burst of back-to-back calls, on the parent's own clock, over what the candidate's reported
    host-inclusive time predicts (honest: about 1 or below; `timing-wall-clock`)."""
    wall_ratio_eager: float = 0.0
    """The same for the eager baseline (calibration)."""
    clock_ratio: float = 0.0
    """Worst round's burst on the parent's clock over the candidate worker's own measurement of it (honest: ~1 on an
    idle host; a loaded host raises it, which the kernel's account below tells apart from a slowed clock)."""
    clock_ratio_cpu: float = 0.0
    """Worst round's burst as the kernel accounts for the candidate worker's busiest thread (time on a CPU plus time
    waiting for one, read from /proc by the parent) over the worker's own measurement (honest: ≤ ~1 at any load;
    0 where /proc has no schedstat)."""
    candidate_held: int = 0
    """Baseline timing requests (eager rounds and bursts, `torch.compile` rounds timed for this verdict) during which
    the candidate's whole process tree was stopped, so none of its code ran while a baseline was timed (0: no
    worker process to stop, or no baseline timed)."""
    wall_check_attempts: int = 0
    """Most bursts one round needed before one was within the `timing-wall-clock` bounds (1: the first; 3 at most)."""
    burst_inputs_distinct: bool | None = None
    """Whether every wall-clock burst call had inputs of its own (some tensor argument's elements are independent of
    their position, so it moves window every call): no memo of earlier results can answer a call. False: every tensor
    argument has a positional structure (zeros pattern, symmetry, normalised slices) and the calls cycle through a
    few draws. None: not measured (older verdicts, no timing)."""
    profile: Literal["quick", "full"] = "full"
    """The timing profile: `quick` (one short round, agent iterations) or `full` (final solutions, evaluation)."""
    rounds: int = 0
    """Rounds of timing run."""
    baselines_cached: bool = False
    """The `torch.compile` samples came from the on-disk baseline cache (same problem, seed, device, precision,
    torch and timing settings). Eager is always timed live: it calibrates the wall-clock check."""


class CompileInfo(_Model):
    seconds: float = 0.0
    cache_hit: bool = False
    extensions: list[str] = Field(default_factory=list)
    """Names of `load_inline` extensions the candidate built."""
    log: str = ""
    """The full compiler log (ninja, g++/nvcc), verbose builds included."""
    steps: dict[str, float] = Field(default_factory=dict)
    """Seconds per step of each extension built for this verdict (none for cache hits), keyed `<extension>:<step>`:
    ninja's outputs (`main.o` the binding unit, `cuda.cuda.o` the CUDA unit, `<extension>.so` the link) and nvcc's
    phases (`nvcc:cudafe++`, `nvcc:cicc`, `nvcc:ptxas`, `nvcc:gcc (compiling)`, ...)."""
    symbols: dict[str, list[str]] = Field(default_factory=dict)
    """Undefined symbols of the built extensions that a static rule owns, by rule (`verify/binary_check.py`): what
    the binary calls outside itself, whatever name its source gives it."""


class Env(_Model):
    device: str = ""
    device_name: str = ""
    driver: str = ""
    cuda: str = ""
    torch: str = ""
    triton: str = ""
    python: str = ""
    precision: str = "fp32"
    capability: str = ""
    l2_bytes: int = 0
    hostname: str = ""
    gpu_index: str = ""
    """Which of the verifying process's visible GPUs judged (`cuda:N` → "N"); empty on CPU."""
    gpu_name: str = ""
    gpu_uuid: str = ""
    """The judging GPU's UUID (stable across CUDA_VISIBLE_DEVICES orderings); empty on CPU."""
    isolation: list[str] = Field(default_factory=list)
    """OS isolation layers that were active: the candidate worker's (namespaces, Landlock, subreaper) and the
    reference worker's (`verify/isolation.py` names them; a *verified* verdict needs its documented minimum)."""


class KernelStat(_Model):
    name: str
    calls: int
    total_ms: float
    custom: bool
    """True when the kernel is not from ATen, cuBLAS, cuDNN or torch's generated code."""


class Census(_Model):
    """Which GPU kernels one forward pass launched (torch.profiler)."""

    kernels: list[KernelStat] = Field(default_factory=list)
    custom: int = 0
    """Launches of the candidate's own kernels."""
    library: int = 0
    """Launches of ATen/cuBLAS/cuDNN/generated kernels."""
    compiled_by_torch: list[str] = Field(default_factory=list)
    """Kernels `torch.compile` generated inside the candidate (Inductor's Triton kernels, known by provenance):
    PyTorch compute under every policy, counted with the library's."""


class MemoryUse(_Model):
    """Peak device memory of one forward on trial 0's inputs, beyond what was allocated before the call (CUDA only;
    measured in the candidate's own process: a metric, never a gate)."""

    candidate_peak_bytes: int
    reference_peak_bytes: int
    ratio: float | None = None
    """candidate / reference; None when the reference allocated nothing."""


class WeightCopy(_Model):
    copied: int = 0
    """Parameters and buffers copied from the reference by name and shape."""
    not_copied: list[str] = Field(default_factory=list)


class KernelUse(_Model):
    """One custom-kernel entry point (an extension function, a Triton kernel, an op the extension registered)."""

    name: str
    calls: int = 0
    """Calls in one forward."""
    reaches_output: bool | None = None
    """Whether replacing its outputs with noise put forward's result outside tolerance; None when not tested."""
    detail: str = ""


class CustomWork(_Model):
    """What the candidate's own kernels did in one forward, and their share of its time."""

    kernels: list[KernelUse] = Field(default_factory=list)
    share: float | None = None
    """Fraction of the forward's time spent in custom kernels (0..1); None when it could not be measured."""
    share_basis: Literal["device_time", "host_time", "unavailable"] = "unavailable"
    """`device_time`: the CUDA census (custom kernels' device time over all kernels'); `host_time`: CPU device,
    wall time inside the candidate's own kernel calls over the whole forward's."""


class AlternativeResult(_Model):
    label: str
    """Which alternative: its shape overrides and/or precision."""
    passed: bool
    status: Status
    """`accepted` when every trial matched; otherwise why not (`bad_problem`: the reference itself fails there)."""
    trials: int = 0
    max_abs_error: float = 0.0
    max_rel_error: float = 0.0
    detail: str = ""


class Robustness(_Model):
    """The candidate on the task's alternative shapes and dtypes (each with its own reference)."""

    alternatives: list[AlternativeResult] = Field(default_factory=list)
    passed: bool = True
    """Every alternative the reference could run was matched."""
    note: str = ""
    """Where the alternatives came from (given by the caller, or derived from the problem's size constants), or why
    none could be derived."""


class WorkerReuse(_Model):
    """What a verdict found already running: a warm verifier (the local service, or a long-lived Verifier) reuses its
    reference worker with the problem set up and a candidate worker started while the slot was idle."""

    reference_pid: int = 0
    reference_reused: bool = False
    """The reference worker already had this problem set up, with its trials' outputs."""
    candidate_prestarted: bool = False
    """The candidate's fresh worker had been started before the verdict needed it."""
    candidate_ready_ahead: bool = False
    """...and had set its device up too (CUDA initialised) while the verifier was idle (`Verifier.ready_spares`), so
    the hand-out did not wait for it (false when the request came while that bring-up was still under way)."""
    served_by: str = ""
    """`service pid N` when the local verifier service judged it; empty in-process."""


class SettingsUsed(_Model):
    """The settings that judged a verdict, where they differ from VerifyConfig's defaults (verify/strength.py)."""

    changed: dict[str, str] = Field(default_factory=dict)
    """Every setting that differs from the defaults, name -> its value as JSON (`static.<field>` for the static
    policy's); the seed, device and build cache are recorded elsewhere or not at all."""
    weakened: list[str] = Field(default_factory=list)
    """Check settings weaker than the verifiable floor (a check off, a looser threshold, fewer trials or checked
    calls): a verdict with any is never *verified* (contracts/verified.py)."""
    service_kept: list[str] = Field(default_factory=list)
    """Settings the verifier service replaced with its own (its build cache, workers, limits and timeouts)."""


class Verdict(_Model):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, use_attribute_docstrings=True)

    schema_: str = Field(default=SCHEMA, alias="schema")
    accepted: bool
    status: Status
    message: str
    findings: list[Finding] = Field(default_factory=list)
    correctness: Correctness = Field(default_factory=Correctness)
    timing: Timing | None = None
    compile: CompileInfo = Field(default_factory=CompileInfo)
    env: Env = Field(default_factory=Env)
    problem_sha256: str = ""
    candidate_sha256: str = ""
    seconds: float = 0.0
    """Wall time of the whole verification."""
    phase_seconds: dict[str, float] = Field(default_factory=dict)
    """Seconds per phase: `compile`; `judge` (everything on the device slot) and inside it `device_lock_wait` (every
    wait for the device, shared or alone; `timing_lock_wait` is part of it),
    `reference` (the problem set up in the reference worker, or reused), `worker_start` (waiting for a fresh candidate
    worker), `load_init` (with, inside it, `load`: the candidate imported, its extensions loaded, and `init`:
    `ModelNew` built, the weights copied), `correctness` (the candidate's trials), `compare` (against the oracle, refill check),
    `checks` (census, peak memory), `timing` (with, inside it, `timing_lock_wait`: the device taken alone,
    `timing_held`: the rounds with the device held alone, `timing_bursts`: the wall-clock bursts, and
    `timing_checks`: the timed calls' outputs checked), `custom_work` (data-flow probes), `worker_end` (the candidate's
    worker killed and reaped), `robustness`; then `sanitize_lock_wait`
    and `sanitize`."""

    @property
    def device_seconds(self) -> float:
        """Seconds this verdict occupied a device slot: its judgement without the wait for the device, plus its
        sanitizer run. Compiles and queue waits are not in it; several slots share one GPU (`judges_per_gpu`), so
        the sum over verdicts can exceed a GPU's wall time. The one definition of a verdict's GPU-seconds."""
        p = self.phase_seconds
        return round(max(p.get("judge", 0.0) - p.get("device_lock_wait", 0.0), 0.0) + p.get("sanitize", 0.0), 3)
    device_alone: str = ""
    """Why the judgement held its device alone instead of sharing it with other judgements ("" = it shared it): its
    expected memory did not fit beside them, or it ran out of device memory with the device shared and was judged
    again alone (`phase_seconds["oom_retry"]`: the first attempt's seconds). verify/device_memory.py."""
    candidate_output_tail: str = ""
    """Last lines the candidate printed (stdout+stderr), for people; never parsed."""
    census: Census | None = None
    """GPU kernels of one forward (CUDA only)."""
    weights: WeightCopy | None = None
    memory: MemoryUse | None = None
    """Peak device memory against the reference's (CUDA; None where not measured)."""
    sanitizer: dict[str, Any] = Field(default_factory=dict)
    """compute-sanitizer results per tool, when `--sanitize` ran."""
    policy: Literal["strict", "kernelbench"] = "strict"
    """The policy this verdict was judged under; every number reported from it carries this label."""
    shapes: str = ""
    """Which sizes the problem was judged at and why (`verify.shapes`); empty in verdicts from before it existed."""
    custom: CustomWork | None = None
    """The candidate's own kernels: which ran, whether their output reaches the result, their share of time."""
    robustness: Robustness | None = None
    """Results on alternative shapes/dtypes, when the caller supplied any."""
    phase_started: dict[str, float] = Field(default_factory=dict)
    """Wall-clock start (Unix seconds) of the `compile`, `judge` and `timing_held` phases, with `phase_seconds` their
    lengths:
    how the phases of a batch's verdicts overlapped."""
    workers: WorkerReuse | None = None
    """Which long-lived parts of the verifier this verdict reused (absent when it never reached a device)."""
    settings: SettingsUsed = Field(default_factory=SettingsUsed)
    """The settings it was judged with, where they differ from the defaults, and which of them weaken the checks."""

    def to_json(self) -> str:
        return self.model_dump_json(by_alias=True, indent=2)

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)

    @property
    def rejected_by(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "reject"]
