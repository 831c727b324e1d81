"""The evaluation's results, typed: one definition of every metric (docs/metrics.md says how each is computed).

Everything here is JSON-clean. A metric the stored verdicts cannot support is `measured=False` with a `note` that
says why; it is never filled with a guess.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Rate", "Distribution", "FastP", "PassAtK", "Cost", "GateMetrics", "TaskRow", "FlaggedRow", "RunMeta",
           "EnvInfo", "EvalSummary", "P_VALUES", "BOOTSTRAP_SAMPLES", "BOOTSTRAP_SEED", "CI_LEVEL"]

P_VALUES = (0.0, 1.0, 1.5, 2.0)
"""The speedup thresholds of fast_p (KernelBench reports fast_0, fast_1, fast_2; 1.5 is ours)."""
BOOTSTRAP_SAMPLES = 1000
BOOTSTRAP_SEED = 20240601
"""Fixed, so a report computed twice from the same store shows the same intervals."""
CI_LEVEL = 0.95


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class Rate(_Model):
    """A proportion with its percentile-bootstrap interval (resampling tasks)."""

    measured: bool = True
    """False when no stored verdict supports it; then `note` says why and the numbers are 0."""
    numerator: float = 0.0
    denominator: float = 0.0
    value: float = 0.0
    """numerator / denominator."""
    ci_low: float = 0.0
    ci_high: float = 0.0
    note: str = ""


class Distribution(_Model):
    """Quantiles (numpy's linear interpolation) and the geometric mean of a set of positive values."""

    measured: bool = True
    n: int = 0
    p10: float = 0.0
    p50: float = 0.0
    p90: float = 0.0
    mean: float = 0.0
    geomean: float = 0.0
    """0 when any value is not positive."""
    min: float = 0.0
    max: float = 0.0
    values: list[float] = Field(default_factory=list)
    """The values themselves, for plots."""
    note: str = ""


class FastP(_Model):
    """fast_p: share of counted episodes that are correct and faster than the baseline by more than p."""

    p: float
    baseline: str
    """`eager` or `compile`."""
    time: str
    """`device` (the verifier's stream-ordered time), `host` (host-inclusive call time) or `wall` (the verifier's own
    clock around back-to-back calls, `Timing.speedup_vs_eager_wall`: nothing in the candidate's process moves it)."""
    rate: Rate


class PassAtK(_Model):
    k: int
    rate: Rate
    """Mean over tasks with at least k samples of the unbiased estimator 1 - C(n-c, k) / C(n, k)."""


class Cost(_Model):
    """Spend per solved task: totals over every counted episode divided by the number of correct episodes."""

    solved: int = 0
    tokens: Rate = Field(default_factory=Rate)
    cost_usd: Rate = Field(default_factory=Rate)
    gpu_seconds: Rate = Field(default_factory=Rate)
    wall_seconds: Rate = Field(default_factory=Rate)
    verify_seconds: Distribution = Field(default_factory=Distribution)
    """Wall time of each verdict of the episodes (the verifier's own `seconds`)."""


class GateMetrics(_Model):
    """The three gates and the metrics past them, over one group of episodes (a level, a category, all)."""

    episodes: int = 0
    tasks: int = 0
    gate1_compile: Rate = Field(default_factory=Rate)
    first_compile: Rate = Field(default_factory=Rate)
    correct: Rate = Field(default_factory=Rate)
    seeds: Rate = Field(default_factory=Rate)
    alternatives: Rate = Field(default_factory=Rate)
    sanitizer: Rate = Field(default_factory=Rate)
    max_abs_error: Distribution = Field(default_factory=Distribution)
    max_rel_error: Distribution = Field(default_factory=Distribution)
    error_vs_fp64: Distribution = Field(default_factory=Distribution)
    fast_p: list[FastP] = Field(default_factory=list)
    speedup: dict[str, Distribution] = Field(default_factory=dict)
    """`eager_device`, `compile_device`, `eager_host`, `compile_host`: over correct, timed episodes."""
    repair_rounds: Distribution = Field(default_factory=Distribution)
    pass_at_k: list[PassAtK] = Field(default_factory=list)
    peak_memory: Distribution = Field(default_factory=Distribution)
    """Candidate / reference peak device memory of one forward, over correct answers (CUDA verdicts carry it)."""
    cost: Cost = Field(default_factory=Cost)


class TaskRow(_Model):
    """One counted episode: its answer and what the gates saw."""

    episode_id: int
    task_id: str
    sample: int = 0
    level: int | None = None
    """KernelBench level (1-3); None (null) when the task names none."""
    category: str = "unknown"
    status: str
    """The answer's latest verdict status, or `no_candidate` / `not_judged`."""
    gate1: bool
    correct: bool
    first_compile: bool | None = None
    repair_rounds: int | None = None
    speedup_eager: float | None = None
    """None (null) when not measured: the answer is not correct, was not timed, or has no such baseline."""
    speedup_compile: float | None = None
    speedup_eager_host: float | None = None
    speedup_compile_host: float | None = None
    speedup_eager_wall: float | None = None
    """Speedup over eager by the verifier's own clock (`Timing.speedup_vs_eager_wall`)."""
    speedup_unreliable: list[str] = Field(default_factory=list)
    """Which of the speedups above (`eager_device`, `compile_device`, `eager_host`, `compile_host`) the timings' own
    spread does not support (`contracts.speedup`): shown marked, left out of the speedup distributions."""
    speedup_low: dict[str, float] = Field(default_factory=dict)
    """For each unreliable speedup, the slow end of its quartile range: what fast_p counts it by."""
    candidate_ms: float | None = None
    max_abs_error: float | None = None
    """None when no verdict ran the answer's trials."""
    error_vs_fp64: float | None = None
    alternatives: str = ""
    """`passed/judged` alternative shapes and dtypes, empty when none were judged."""
    policy: str = ""
    candidate_sha256: str = ""
    tokens: int | None = None
    """Prompt and completion tokens; None when no model was queried or the backend reported no counts."""
    cost_usd: float | None = None
    """What the model's backend reported the episode cost; None (null) when it reported none."""
    gpu_seconds: float | None = None
    """Device time of the episode's verdicts; None (null) when none ran on a GPU."""
    baseline_drift: float | None = None
    """This verdict's eager median over the cached baseline's first median on the same machine (1 = same); None when
    there is no cached baseline to compare with."""
    exit_reason: str = ""
    model_failure: str = ""
    """The model's failure that ended the episode (`<kind>: <message>`), counted as a failed sample; "" otherwise."""


class FlaggedRow(_Model):
    """An episode reported apart and never counted: its task is degenerate, flagged, or was not judged to the end."""

    episode_id: int
    task_id: str
    sample: int = 0
    why: str
    status: str = ""


class EnvInfo(_Model):
    device: str = ""
    device_name: str = ""
    driver: str = ""
    cuda: str = ""
    torch: str = ""
    precision: str = ""
    hostname: str = ""
    verdicts: int = 0


class RunMeta(_Model):
    id: int
    name: str
    model: str
    mode: str
    """`one-shot`, `agent`, `generations`, or the name of a run evaluate did not create."""
    task_source: str
    status: str
    created: str
    policies: list[str] = Field(default_factory=list)
    """The verifier policies of the answers' verdicts: every number of the report was produced under these."""
    samples: int = 1
    env: list[EnvInfo] = Field(default_factory=list)


class EvalSummary(_Model):
    schema_: str = Field("kernelmosaic.eval-summary/1", alias="schema")
    run: RunMeta
    overall: GateMetrics
    by_level: dict[str, GateMetrics] = Field(default_factory=dict)
    by_category: dict[str, GateMetrics] = Field(default_factory=dict)
    tasks: list[TaskRow] = Field(default_factory=list)
    flagged: list[FlaggedRow] = Field(default_factory=list)

    model_config = ConfigDict(extra="forbid", populate_by_name=True, use_attribute_docstrings=True)
