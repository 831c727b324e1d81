"""How the verifier judges: one typed config, every field documented, overridable from the CLI."""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from kernelmosaic.contracts.precision import TOLERANCES, Precision
from kernelmosaic.host import host_memory_gib
from kernelmosaic.paths import default_cache_dir
from kernelmosaic.verify.static.policy import StaticPolicy

__all__ = ["CPU_TIMING", "VerifyConfig", "Policy", "TimingProfile"]

Policy = Literal["strict", "kernelbench"]
TimingProfile = Literal["quick", "full"]
"""`strict`: every operation of forward runs in the candidate's own kernels. `kernelbench`: some operators may
stay in PyTorch (as KernelBench allows), but a custom kernel must run and its output must reach the result."""

CPU_TIMING = {"timing_budget_ms": 25.0, "timing_rounds": 2}
"""The timing plan of the CPU device where the settings give none, for `verify`, `verify-batch`, the agent,
`evaluate` and the Python API alike: host timing there is only indicative (the verdict's speedups are checked
against the verifier's own clock and marked unreliable where their spread is wide), and a round of 400 ms per subject
costs a CPU verdict ~10 s of a two-core machine for numbers no more trustworthy."""


class VerifyConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    @model_validator(mode="before")
    @classmethod
    def _device_timing(cls, data: object) -> object:
        """The CPU device's timing plan (`CPU_TIMING`) under whatever the settings give."""
        if isinstance(data, dict) and data.get("device") == "cpu":
            return {**CPU_TIMING, **data}
        return data

    device: Literal["cuda", "cpu"] = "cuda"
    """Where the candidate runs. `cpu` judges C++ `load_inline` candidates with host timers."""
    precision: Precision = "fp32"
    """Precision the task asks for: floating inputs and weights are cast to it; sets tolerances."""
    shapes: Literal["auto", "small", "full"] = "auto"
    """Which sizes a problem is judged at, the same for `verify`, `verify-batch` and the Python API
    (`verify/problem_shapes.py`): `auto` is a task's small shapes on the CPU when the problem is a task's reference
    (its folder's `reference.py`, or a bundled task's reference text) with `[shapes] small`, else the problem's own
    sizes; `small` asks for the task's small shapes (an error for a problem that has none); `full` is always the
    problem's own sizes. The verdict's `shapes` says which ran and why."""
    trials: int = Field(5, ge=1)
    """Correctness trials, each with fresh inputs and a fresh seed."""
    seed: int = Field(default_factory=lambda: secrets.randbelow(1 << 31))
    """Base seed; trial k uses seed + k. Drawn at random by default, so a candidate cannot regenerate the
    inputs in advance and precompute answers; the verdict records it, and passing it reproduces a verdict."""
    atol: float | None = None
    """Absolute tolerance; default from the precision."""
    rtol: float | None = None
    """Relative tolerance; default from the precision."""
    timing: bool = True
    """Time the accepted candidate against eager and torch.compile."""
    compile_baseline: bool = True
    """Also time a `torch.compile` build of the reference. The commands default it to on for CUDA only: on the CPU,
    Inductor's build of a problem takes tens of seconds and its times vary widely under load."""
    timing_budget_ms: float = 400.0
    """Target measured time per timed subject per round; repetitions are chosen from it. On the CPU device 25 where
    the settings give none (`CPU_TIMING`)."""
    timing_rounds: int = 3
    """Rounds of interleaved timing (candidate, eager, compile) under the `full` profile. On the CPU device 2 where
    the settings give none (`CPU_TIMING`)."""
    timing_profile: TimingProfile = "full"
    """`full`: `timing_rounds` rounds of `timing_budget_ms` per subject (final solutions, evaluation). `quick`: one
    round of `quick_budget_ms` per subject (agent iterations), with the same checks of the timed calls and the same
    wall-clock burst. Both record sample counts and quartiles; `verify(timing_profile=...)` picks one per call."""
    quick_budget_ms: float = Field(150.0, gt=0.0)
    """Target measured time per subject under the `quick` profile (at most `timing_budget_ms`), which is also the
    most host wall time its timed calls may take (`timing_wall_ms`)."""
    baseline_cache: bool = True
    """Keep the `torch.compile` baseline's timing samples on disk per (problem, seed, device, precision, torch,
    timing settings), so later candidates of the same problem, in any process, skip building and timing it. Eager
    is timed live in every verdict: it calibrates the wall-clock check."""
    lookahead: int | None = Field(None, ge=1)
    """Candidates compiling ahead of judgement in `verify_many`/`verify-batch`; default `lookahead_slots()`: by the
    host's cores and memory."""
    use_service: bool = True
    """`verify` and `verify-batch` hand their work to the local verifier service (`kernelmosaic verify-serve`) when
    one answers on the build cache's socket in the user's runtime folder (docs/threat-model.md, the verifier
    service); otherwise, or when it declines or stops before it answers (a batch keeps the verdicts it gave), they
    judge in-process."""
    compile_jobs: int | None = Field(None, ge=1)
    """Cores one `load_inline` compile is counted as using (sets the default `lookahead`); default: 2 on CUDA (the
    extension's C++ and CUDA units build at once), 1 on the CPU (a C++ extension is one unit)."""
    compile_memory_gib: float = Field(2.0, gt=0.0)
    """Host memory one compile is counted as using (the host compiler parsing torch's headers peaks at ~1.3 GiB):
    the default `lookahead` is capped by the host's (or its container's) memory divided by this."""
    compile_nice: int = Field(10, ge=0, le=19)
    """CPU niceness added to the compiles off a batch's critical path, so the one most candidates wait on gets the cores
    first: in a batch whose candidates share builds, every build fewer of them wait on than the most shared one, the
    workers of the candidates that wait on a shared build, and on a GPU the background precompiled headers. 0: every
    compile at the verifier's own priority."""
    split_nvcc: bool = True
    """Build a candidate's CUDA unit with nvcc's host and device front ends side by side (the same commands nvcc
    runs, `kmworker/nvcc_split.py`): the unit's wall time falls from their sum to the longer of them. Off: nvcc as
    is. Either way the build directory is the same, so switching does not rebuild the cache."""
    lean_cuda_units: bool = True
    """Compile a candidate's CUDA unit against the torch declarations it names (`kmworker/lean_unit.py`: ATen's
    tensor, the dispatch macros, the ATen operators it calls) instead of all of torch, which its front ends otherwise
    parse three times; when that does not compile, the unit as written is built and only its output is reported.
    Same build directory either way. Off: every unit as written."""
    lean_binding_units: bool = True
    """Compile a C++ extension's binding unit (`load_inline`'s `main.cpp`) against the lean torch prelude plus pybind11
    and torch's type casters (`kmworker/cxx_lean.py`, run by torch's ninja as its C++ compiler) before the unit as
    written, which is built, and alone reported, when that does not compile. Same build directory either way. Off:
    every binding unit as written."""
    split_cuda_units: bool = True
    """Compile a candidate's CUDA unit as two before anything else (`kmworker/unit_split.py`): its kernels and device
    code by nvcc without torch's headers, its host code against the lean torch declarations, each launch lowered as
    nvcc itself lowers it, joined into one object; where that cannot be done or fails, the lean unit, then the unit as
    written (only the last's output is ever reported). Same build directory either way. Off: straight to the lean
    unit."""
    timing_lead_us: float = Field(50.0, ge=0.0)
    """CUDA: before each timed call a spin kernel keeps the device busy for at least this long (µs), and for twice
    the host's measured enqueue time, so the window holds device time and not the host's launch latency, which
    moves with host load (docs/benchmarks.md). 0 = off: the start event fires on an idle device."""
    input_sets: int = 4
    """Fresh input sets rotated across timed calls."""
    timed_checks: int = Field(24, ge=1)
    """Timed calls per round whose outputs are checked against the reference by fingerprint, chosen at random after
    the round (every call is fingerprinted): a candidate that skips work on 10% of its calls escapes one round with
    probability 0.9^24 ≈ 8%, all three with 0.05%."""
    wall_check_ms: float = Field(50.0, gt=0.0)
    """Length of each round's wall-clock burst as the reported host-inclusive time predicts it; the parent times it
    with its own clock (`timing-wall-clock`). On a busy host the candidate's burst is lengthened (docs/threat-model.md)."""
    compile_timeout_s: float = 600.0
    """Building the candidate's extensions."""
    load_timeout_s: float = 120.0
    """Importing the candidate module (with a warm build cache)."""
    init_timeout_s: float = 60.0
    """Constructing `ModelNew` and copying weights."""
    run_timeout_s: float = 120.0
    """All correctness trials together. Every worker limit here counts the worker's own work: time its threads
    waited for a CPU on a loaded machine is added on, up to 4× the limit (`verify/pool.py`, `LOAD_GRACE`)."""
    timing_timeout_s: float = 180.0
    """All timing rounds together."""
    memory_limit_gb: float = 16.0
    """Address-space cap of CPU-device workers (not applied to CUDA workers: CUDA reserves huge virtual ranges)."""
    host_rss_limit_gb: float = 32.0
    """Resident memory above which a worker is killed as `resource_error` (watched, for CUDA workers)."""
    large_output_bytes: int = Field(384 << 20, ge=0)
    """A problem whose first trial's outputs or inputs take more bytes than this is judged in large-output mode
    (docs/architecture.md): the reference worker holds one trial at a time where it computed it (on the GPU for CUDA)
    and compares the candidate's outputs there, handed over as CUDA IPC handles or sealed memfds; only descriptors and
    the comparison's numbers reach this process. Below it every trial's data comes here once per problem and is
    compared here (fast for the many small problems). 0 puts every problem in large-output mode."""
    cache_dir: Path = Field(default_factory=default_cache_dir)
    """Build directories keyed by content hash live here, shared across runs."""
    keep_scratch: bool = False
    """Keep the worker's scratch directory for inspection."""
    static_checks: bool = True
    """Run the static anti-hack analysis before compiling."""
    memory_watch: bool = True
    """Watch, from this process, the candidate worker's library GOTs, core libraries' machine code and the C entry
    points of its timer and reply channel (verify/got_watch.py). Off only to test the layers behind it (the
    parent's clock); a verdict judged without it is never verified."""
    static: StaticPolicy = Field(default_factory=StaticPolicy)
    """What the static analysis rejects, flags or allows (e.g. `torch_compute="flag"` for hybrid tasks)."""
    policy: Policy = "strict"
    """`strict` or `kernelbench` (docs/threat-model.md, policies). `verify(policy=...)` (a task's own policy, passed
    by its caller) overrides it for one verdict; every verdict records the policy that produced it."""
    robustness_trials: int = Field(2, ge=1)
    """Correctness trials per alternative shape/dtype set (`verify(alternatives=...)`)."""
    derive_alt: bool = True
    """When a call gives no alternatives, judge the candidate also at sizes derived from the problem's input-size
    constants (`tasks.shapes.size_check_sizes`: small ones, power-of-two factors kept), so a kernel with the problem's sizes baked in
    is `shape-specialised` (a reject under `strict`, a flag under `kernelbench`). Sizes the reference cannot run are
    not used. The verdict's `robustness.note` says which sizes ran or why none could be derived. Off: `--no-derive-alt`."""
    dataflow_functions: int = Field(8, ge=1)
    """At most this many distinct custom-kernel entry points are perturbed one at a time to see whether their
    output reaches what forward returns (one extra forward each)."""
    sanitize: bool = False
    """Run every compute-sanitizer tool (memcheck, racecheck, synccheck, initcheck) on accepted CUDA candidates
    (small shapes first)."""
    race_check: bool = True
    """Run compute-sanitizer racecheck and synccheck once, at the end, on every accepted CUDA candidate whose source
    uses shared memory (`__shared__`, dynamic shared memory in a launch), when `sanitize` does not already run every
    tool: a hazard rejects (`cuda_error`). The verdict's `sanitizer` report says when it was skipped and why."""
    sanitize_gated: bool = False
    """Hold the GPU for the sanitizer only from when a tool's target is set up (Python, torch, the problem and the
    candidate loaded, the CUDA context made: `profile_one --gate`) to the last tool's end, instead of for the tools'
    whole run: a timing phase elsewhere then waits for the forwards only, not for the ~45 s start under the tool.
    Off by default: no gated race check has yet finished on a GPU (each sat until its deadline; the cause is not
    found, `scripts/gpu/race-gate-probe` runs each piece alone); ungated, the race check passes on the H200."""
    sanitize_timeout_s: float = Field(600.0, gt=0.0)
    """Longest one compute-sanitizer tool may run over one forward (the race check's tools run side by side, so the
    check takes about this long at most, twice when the small shapes were not clean and the problem's own run). A
    tool past it is killed with the program under it and claims nothing: a `sanitizer-incomplete` flag, the verdict
    stays the plain run's, and on CUDA the candidate is not verified until a full sanitizer run passes."""
    yield_to_timing_s: float = Field(120.0, ge=0.0)
    """Longest a judgement or a sanitizer run waits, before it takes its GPU shared, for this process's pending
    timing phases on that GPU (timing goes first: devlock.TimingFirst). It bounds what a steady stream of timings
    from other clients can delay them."""
    judges_per_gpu: int = Field(3, ge=1)
    """Device slots per GPU: judgements judged side by side on one GPU, each with its own reference and candidate
    workers. They share the GPU except while one times (devlock.py); on the CPU there is one slot."""
    spare_workers: int = Field(3, ge=0)
    """Candidate workers each GPU slot keeps launched ahead (Python and torch loaded; the device set up only for the
    next one per slot, by the verifier service while it is idle), so a judgement rarely waits for a worker to start;
    the slots of one GPU share theirs, oldest first. The CPU slot keeps at most one, launched while it is idle."""

    def tolerances(self, precision: Precision | None = None) -> tuple[float, float]:
        """(atol, rtol) for this run's precision, or for `precision` (an alternative's) when given."""
        atol, rtol = TOLERANCES[precision or self.precision]
        if precision is not None and precision != self.precision:
            return atol, rtol  # explicit overrides were chosen for the run's own precision
        return (self.atol if self.atol is not None else atol, self.rtol if self.rtol is not None else rtol)

    def timing_plan(self) -> tuple[int, float]:
        """(rounds, budget ms per subject per round) under `timing_profile`."""
        if self.timing_profile == "quick":
            return 1, min(self.quick_budget_ms, self.timing_budget_ms)
        return self.timing_rounds, self.timing_budget_ms

    def timing_wall_ms(self) -> float:
        """Host wall time one subject's timed calls may take in a round. `full`: four times the budget, so a µs
        kernel still gets its samples when each call's flush and lead cost far more than the kernel. `quick`: the
        budget itself, so an agent's iteration stays short (fewer samples of a µs kernel, the same checks)."""
        budget = self.timing_plan()[1]
        return budget if self.timing_profile == "quick" else 4 * budget

    def lookahead_slots(self) -> int:
        """Compiles in flight ahead of judgement: `lookahead`, else as many as the cores (`compile_jobs` each) and
        the memory (`compile_memory_gib` each) hold."""
        if self.lookahead:
            return self.lookahead
        jobs = self.compile_jobs or (2 if self.device == "cuda" else 1)
        by_memory = int(host_memory_gib() // self.compile_memory_gib)
        return max(1, min((os.cpu_count() or 2) // jobs, by_memory))

    def static_policy(self) -> StaticPolicy:
        """The static policy under `policy`: `kernelbench` records PyTorch compute in forward as a flag (unless the
        static policy already allows it); PyTorch's compilers stay PyTorch compute under every policy."""
        if self.policy == "kernelbench" and self.static.torch_compute == "reject":
            return self.static.model_copy(update={"torch_compute": "flag"})
        return self.static
