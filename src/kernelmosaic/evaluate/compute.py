"""The gates and metrics over one group of counted episodes, from their rows and stored verdicts only."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence

from kernelmosaic.contracts.speedup import MAX_SPREAD
from kernelmosaic.evaluate.gates import alternative_results, sanitizer_result, seed_results
from kernelmosaic.evaluate.metrics import (
    P_VALUES,
    Cost,
    Distribution,
    FastP,
    GateMetrics,
    PassAtK,
    Rate,
    TaskRow,
)
from kernelmosaic.evaluate.records import EpisodeRecord
from kernelmosaic.evaluate.stats import distribution, mean_rate, not_measured, pass_at_k_estimate, rate

__all__ = ["gate_metrics", "pass_at_k_values"]

_SPEEDUPS = {"eager_device": "speedup_eager", "compile_device": "speedup_compile",
             "eager_host": "speedup_eager_host", "compile_host": "speedup_compile_host"}


def _groups(rows: Sequence[TaskRow], value: Callable[[TaskRow], tuple[float, float] | None]) -> dict[str, tuple[float, float]]:
    """Sum (numerator, denominator) per task (samples of a task resample together)."""
    out: dict[str, tuple[float, float]] = {}
    for row in rows:
        pair = value(row)
        if pair is None:
            continue
        num, den = out.get(row.task_id, (0.0, 0.0))
        out[row.task_id] = (num + pair[0], den + pair[1])
    return out


def pass_at_k_values(rows: Sequence[TaskRow]) -> list[int]:
    """The k reported: 1, 5 and 10 where every task has that many samples, and the run's own sample count."""
    counts = defaultdict(int)
    for row in rows:
        counts[row.task_id] += 1
    if not counts:
        return [1]
    n = min(counts.values())
    return sorted({1, n} | {k for k in (5, 10) if k <= n})


def _pass_at_k(rows: Sequence[TaskRow]) -> list[PassAtK]:
    per_task: dict[str, list[bool]] = defaultdict(list)
    for row in rows:
        per_task[row.task_id].append(row.correct)
    out = []
    for k in pass_at_k_values(rows):
        values = {t: pass_at_k_estimate(len(c), sum(c), k) for t, c in per_task.items() if len(c) >= k}
        out.append(PassAtK(k=k, rate=mean_rate(values, "no episode")))
    return out


def _speedup(row: TaskRow, field: str) -> float:
    """The row's speedup, 0 where it was not measured (counted as not faster than any p)."""
    return getattr(row, field) or 0.0


def _speedups(rows: Sequence[TaskRow], name: str, field: str) -> Distribution:
    """The distribution of the correct answers' speedups that their own spread supports (the headline); those it
    does not are counted in its note (`contracts.speedup`)."""
    measured = [r for r in rows if r.correct and _speedup(r, field) > 0]
    kept = [_speedup(r, field) for r in measured if name not in r.speedup_unreliable]
    out = distribution(kept, f"no correct answer carries a reliable speedup ({name.replace('_', ' ')} time)")
    if len(kept) < len(measured):
        out.note = (f"{out.note + '; ' if out.note else ''}{len(measured) - len(kept)} speedup(s) left out: their "
                    f"timings' quartile range is wider than a factor {MAX_SPREAD} (unreliable)")
    return out


def _fast_p(rows: Sequence[TaskRow], field: str, name: str, baseline: str, time: str) -> list[FastP]:
    """fast_p: the share of episodes correct and faster than p. An unreliable speedup counts by the slow end of its
    quartile range (faster than p only when its whole range is), so noise cannot make an answer fast."""
    timed = [r for r in rows if r.correct and _speedup(r, field) > 0]
    untimed = [r for r in rows if r.correct and _speedup(r, field) <= 0]
    shaky = [r for r in timed if name in r.speedup_unreliable]

    def counted(r: TaskRow) -> float:
        return r.speedup_low.get(name, 0.0) if name in r.speedup_unreliable else _speedup(r, field)

    out = []
    for p in P_VALUES:
        if not timed and untimed:
            result = not_measured(f"no correct answer's verdict carries a {time}-time speedup vs {baseline}")
        else:
            result = rate(_groups(rows, lambda r, p=p: (float(r.correct and counted(r) > p), 1.0)), "no episode")
            notes = []
            if untimed and result.measured:
                notes.append(f"{len(untimed)} correct answer(s) without this speedup count as not faster")
            if shaky and result.measured:
                notes.append(f"{len(shaky)} unreliable speedup(s) counted by the slow end of their quartile range")
            result.note = "; ".join(notes)
        out.append(FastP(p=p, baseline=baseline, time=time, rate=result))
    return out


def _per_solved(total: float, solved: int, what: str, measured: bool, why: str) -> Rate:
    if not measured:
        return not_measured(why)
    if solved == 0:
        return not_measured(f"no solved task: {what} per solved task is undefined")
    return Rate(numerator=total, denominator=float(solved), value=total / solved)


def _cost(records: Sequence[EpisodeRecord], rows: Sequence[TaskRow], has_model: bool) -> Cost:
    solved = sum(r.correct for r in rows)
    tokens = sum(r.totals.prompt_tokens + r.totals.completion_tokens for r in records)
    cost = sum(r.totals.cost_usd for r in records)
    gpu = sum(r.totals.gpu_seconds for r in records)
    on_gpu = any(j.verdict.env.device == "cuda" for r in records for j in r.judged)
    wall = sum(r.totals.wall_seconds for r in records)
    seconds = [j.verdict.seconds for r in records for j in r.judged]
    no_model = "judged generations: no model was queried"
    return Cost(solved=solved,
                tokens=_per_solved(tokens, solved, "tokens", has_model and tokens > 0,
                                   no_model if not has_model else "the backend reported no token counts"),
                cost_usd=_per_solved(cost, solved, "cost", has_model and cost > 0,
                                     no_model if not has_model else "the backend reported no cost"),
                gpu_seconds=_per_solved(gpu, solved, "GPU-seconds", on_gpu, "no verdict ran on a GPU"),
                wall_seconds=_per_solved(wall, solved, "wall seconds", True, ""),
                verify_seconds=distribution(seconds, "no verdict"))


def gate_metrics(records: Sequence[EpisodeRecord], rows: Sequence[TaskRow], has_model: bool) -> GateMetrics:
    """`records` and `rows` are the same counted episodes, in the same order."""
    by_id = {r.episode_id: r for r in records}

    def pooled(results: Callable[[EpisodeRecord], list[bool]]) -> dict[str, tuple[float, float]]:
        return _groups(rows, lambda row: (float(sum(x := results(by_id[row.episode_id]))), float(len(x))))

    def sanitized(row: TaskRow) -> tuple[float, float] | None:
        result = sanitizer_result(by_id[row.episode_id])
        return None if result is None else (float(result), 1.0)

    fast = []
    for field, baseline, time in (("speedup_eager", "eager", "device"), ("speedup_compile", "compile", "device"),
                                  ("speedup_eager_host", "eager", "host"), ("speedup_compile_host", "compile", "host"),
                                  ("speedup_eager_wall", "eager", "wall")):
        fast += _fast_p(rows, field, f"{baseline}_{time}", baseline, time)
    errors = [by_id[r.episode_id].answer_verdict() for r in rows]
    answers = [v for r, v in zip(rows, errors, strict=True) if r.correct]
    ran = [v for v in errors if v is not None and v.correctness.trials > 0]
    return GateMetrics(
        episodes=len(rows), tasks=len({r.task_id for r in rows}),
        gate1_compile=rate(_groups(rows, lambda r: (float(r.gate1), 1.0)), "no episode"),
        first_compile=rate(_groups(rows, lambda r: None if r.first_compile is None else (float(r.first_compile), 1.0)),
                           "no episode received a verdict"),
        correct=rate(_groups(rows, lambda r: (float(r.correct), 1.0)), "no episode"),
        seeds=rate(pooled(seed_results), "no answer was judged under two or more correctness seeds"),
        alternatives=rate(pooled(alternative_results), "no verdict carries a robustness section (alternative "
                                                       "shapes/dtypes were not judged)"),
        sanitizer=rate(_groups(rows, sanitized), "compute-sanitizer never ran on an answer (CPU device, or not "
                                                 "requested)"),
        max_abs_error=distribution([v.correctness.max_abs_error for v in ran], "no answer ran its trials"),
        max_rel_error=distribution([v.correctness.max_rel_error for v in ran], "no answer ran its trials"),
        error_vs_fp64=distribution([v.correctness.error_vs_fp64 for v in ran if v.correctness.error_vs_fp64 > 0],
                                   "no verdict carries an error against a float64 reference"),
        fast_p=fast,
        speedup={name: _speedups(rows, name, field) for name, field in _SPEEDUPS.items()},
        repair_rounds=distribution([float(r.repair_rounds) for r in rows if r.repair_rounds is not None],
                                   "no episode reached an accepted verdict"),
        pass_at_k=_pass_at_k(rows),
        peak_memory=distribution([v.memory.ratio for v in answers if v is not None and v.memory is not None
                                  and v.memory.ratio is not None],
                                 "no correct answer's verdict records peak memory (measured on CUDA only)"),
        cost=_cost(records, rows, has_model),
    )
