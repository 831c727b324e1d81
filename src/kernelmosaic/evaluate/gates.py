"""Per-episode facts the gates are computed from: which gate each verdict status fails, and one row per episode."""

from __future__ import annotations

from kernelmosaic.contracts.speedup import SpeedupReading, timing_speedups
from kernelmosaic.contracts.verdict import Status, Timing, Verdict
from kernelmosaic.contracts.verified import sanitizer_passed
from kernelmosaic.evaluate.metrics import TaskRow
from kernelmosaic.evaluate.records import EpisodeRecord

__all__ = ["GATE_OF_STATUS", "NO_CANDIDATE", "NOT_JUDGED", "MODEL_FAILED", "MODEL_FAILURE_EXITS", "model_failure",
           "passes_gate1", "first_compile", "repair_rounds",
           "seed_results", "alternative_results", "sanitizer_result", "flag_reason", "speedup_readings", "task_row"]

NO_CANDIDATE = "no_candidate"
"""The episode ended without writing a candidate."""
NOT_JUDGED = "not_judged"
"""Its answer was written but never received a verdict."""
MODEL_FAILED = "model_failed"
"""The model under evaluation failed to answer (an error or a timeout of its backend) before writing a candidate."""
MODEL_FAILURE_EXITS = ("model_error", "model_transient", "model_unusable")
"""Exit reasons of an episode that ended because the model's backend failed (`agent/episode.py`, `evaluate/oneshot.py`):
a generation error or timeout (prompt too long, out of memory, no answer, an endpoint that stayed unreachable or
throttled after the backend's retries). The model under evaluation is the whole serving stack: its failure is a failed
sample, counted in every denominator."""
_OPERATOR_KINDS = ("config",)
"""`ModelError.kind`s that are the operator's setup, not the model: the spec or options given to the run are unusable
(`ModelConfigError`). Such an episode is reported apart, as an infrastructure failure."""

GATE_OF_STATUS: dict[str, int] = {
    # gate 1, compile and interface: it never ran forward with the right signature and output layout
    NO_CANDIDATE: 1, NOT_JUDGED: 1, MODEL_FAILED: 1, Status.static_reject: 1, Status.compile_error: 1, Status.load_error: 1,
    Status.init_error: 1, Status.shape_mismatch: 1, Status.dtype_mismatch: 1, Status.no_custom_kernel: 1,
    # gate 2, numerics and integrity: it ran, and its results or its behaviour were wrong
    Status.runtime_error: 2, Status.cuda_error: 2, Status.crash: 2, Status.timeout: 2, Status.resource_error: 2,
    Status.output_mismatch: 2, Status.nondeterministic: 2, Status.integrity_violation: 2,
    # gate 3, performance: rejected while being timed
    Status.timing_anomaly: 3,
}
"""The gate a status fails. `accepted` fails none; `bad_problem` is the task's fault and is reported apart."""


def model_failure(record: EpisodeRecord) -> str:
    """The model failure that ended the episode ("<kind>: <message>", from its exit detail), or "" when it did not
    end on one (or ended on the operator's own configuration error)."""
    if record.exit_reason not in MODEL_FAILURE_EXITS:
        return ""
    detail = record.exit_detail or record.exit_reason
    if detail.split(":", 1)[0].split(" ", 1)[0].strip() in _OPERATOR_KINDS:
        return ""
    return detail


def _status(record: EpisodeRecord) -> str:
    if not record.answer_sha256:
        return MODEL_FAILED if model_failure(record) else NO_CANDIDATE
    verdict = record.answer_verdict()
    return verdict.status.value if verdict is not None else NOT_JUDGED


def passes_gate1(status: str) -> bool:
    return GATE_OF_STATUS.get(status, 0) != 1


def first_compile(record: EpisodeRecord) -> bool | None:
    """Did the first candidate that was judged pass gate 1 on its first verdict? None when nothing was judged."""
    if not record.judged:
        return None
    return passes_gate1(record.judged[0].verdict.status.value)


def repair_rounds(record: EpisodeRecord) -> int | None:
    """Candidates written before the first one that received an accepted verdict; None when none did."""
    first = next((j.candidate_sha256 for j in record.judged if j.verdict.accepted), None)
    if first is None:
        return None
    distinct: list[str] = []
    for sha in record.writes:
        if sha == first:
            return len(distinct)
        if sha not in distinct:
            distinct.append(sha)
    return len(distinct)


def seed_results(record: EpisodeRecord) -> list[bool]:
    """Per distinct correctness seed of the answer (latest verdict at that seed): were all its trials matched?
    Empty unless the answer was judged under at least two seeds."""
    latest: dict[int, Verdict] = {}
    for verdict in record.history(record.answer_sha256):
        if verdict.correctness.trials > 0:
            latest[verdict.correctness.seed] = verdict
    if len(latest) < 2:
        return []
    return [v.correctness.passed == v.correctness.trials for v in latest.values()]


def alternative_results(record: EpisodeRecord) -> list[bool]:
    """The answer's latest robustness section: one pass/fail per alternative the reference could run."""
    for verdict in reversed(record.history(record.answer_sha256)):
        if verdict.robustness is not None and verdict.robustness.alternatives:
            return [a.passed for a in verdict.robustness.alternatives if a.status != Status.bad_problem]
    return []


def sanitizer_result(record: EpisodeRecord) -> bool | None:
    """Did the answer's latest compute-sanitizer run pass (`contracts.verified.sanitizer_passed`)? None when it
    never ran."""
    for verdict in reversed(record.history(record.answer_sha256)):
        if (passed := sanitizer_passed(verdict)) is not None:
            return passed
    return None


def flag_reason(record: EpisodeRecord) -> str:
    """Why the episode is reported apart ("" when it counts): a flagged task, a bad problem, an unfinished episode."""
    if record.task_flags:
        return "task flagged: " + ", ".join(record.task_flags)
    if _status(record) == Status.bad_problem:
        return "bad_problem: the reference itself failed"
    if model_failure(record):
        return ""  # the model failed to answer: a failed sample, counted (`MODEL_FAILURE_EXITS`)
    if record.exit_reason in MODEL_FAILURE_EXITS:
        return f"infrastructure: the run's model configuration is unusable ({record.exit_detail or record.exit_reason})"
    if record.status != "done":
        return f"episode {record.status} ({record.exit_reason or 'no exit reason'}): not judged to the end"
    return ""


def speedup_readings(t: Timing) -> dict[str, SpeedupReading]:
    """The four speedups of a verdict's timing, each with whether its measurement supports it (`contracts.speedup`)."""
    return timing_speedups(t)


def task_row(record: EpisodeRecord, drift: float = 0.0) -> TaskRow:
    status = _status(record)
    timed = record.answer_timing() if record.solved else None
    t = timed.timing if timed else None
    verdict = record.answer_verdict()
    alts = alternative_results(record)
    return TaskRow(
        episode_id=record.episode_id, task_id=record.task_id, sample=record.sample, level=record.meta.level or None,
        category=record.meta.category, status=status, gate1=passes_gate1(status), correct=record.solved,
        first_compile=first_compile(record), repair_rounds=repair_rounds(record),
        speedup_eager=t.speedup_vs_eager if t else None, speedup_compile=t.speedup_vs_compile if t else None,
        speedup_eager_host=t.speedup_vs_eager_host if t else None,
        speedup_compile_host=t.speedup_vs_compile_host if t else None,
        speedup_eager_wall=t.speedup_vs_eager_wall if t else None,
        speedup_unreliable=[name for name, reading in speedup_readings(t).items()
                            if reading.measured and not reading.reliable] if t else [],
        speedup_low={name: reading.low for name, reading in speedup_readings(t).items()
                     if reading.measured and not reading.reliable and reading.low is not None} if t else {},
        candidate_ms=t.candidate.median_ms if t else None,
        max_abs_error=verdict.correctness.max_abs_error if verdict and verdict.correctness.trials else None,
        error_vs_fp64=verdict.correctness.error_vs_fp64 if verdict and verdict.correctness.error_vs_fp64 > 0 else None,
        alternatives=f"{sum(alts)}/{len(alts)}" if alts else "", policy=verdict.policy if verdict else "",
        candidate_sha256=record.answer_sha256,
        tokens=(record.totals.prompt_tokens + record.totals.completion_tokens) or None,
        cost_usd=record.totals.cost_usd or None, gpu_seconds=record.totals.gpu_seconds or None, baseline_drift=drift or None,
        exit_reason=record.exit_reason, model_failure=model_failure(record))
