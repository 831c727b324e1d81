"""One run's evaluation summary: counted and reported-apart episodes, the gates overall, per level, per category.

A task whose latest review decision (`kernelmosaic review`, in the same store) is `reject` or `needs-edit`, taken
before or after the run, is reported apart with that decision: its episodes are in no denominator.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

from kernelmosaic.curate.review.gate import review_exclusions
from kernelmosaic.evaluate.baselines import BaselineCache
from kernelmosaic.evaluate.compute import gate_metrics
from kernelmosaic.evaluate.gates import flag_reason, task_row
from kernelmosaic.evaluate.metrics import EnvInfo, EvalSummary, FlaggedRow, RunMeta, TaskRow
from kernelmosaic.evaluate.records import EpisodeRecord, load_records
from kernelmosaic.store import Store
from kernelmosaic.store.records import RunInfo

__all__ = ["summarize_run", "run_mode"]


def run_mode(run: RunInfo) -> str:
    """The evaluation mode the run recorded, else the run's name (a `generate` run reads as agent episodes)."""
    return str(run.config.get("mode") or run.name)


def _env(records: list[EpisodeRecord]) -> list[EnvInfo]:
    seen: dict[tuple, EnvInfo] = {}
    for record in records:
        for judged in record.judged:
            e = judged.verdict.env
            key = (e.device, e.device_name or e.gpu_name, e.driver, e.cuda, e.torch, e.precision, e.hostname)
            if key not in seen:
                seen[key] = EnvInfo(device=e.device, device_name=e.device_name or e.gpu_name, driver=e.driver,
                                    cuda=e.cuda, torch=e.torch, precision=e.precision, hostname=e.hostname, verdicts=0)
            seen[key].verdicts += 1
    return [v for v in seen.values() if v.device]


def _grouped(counted: list[tuple[EpisodeRecord, TaskRow]], key: Callable[[TaskRow], str], has_model: bool) -> dict:
    groups: dict[str, list[tuple[EpisodeRecord, TaskRow]]] = defaultdict(list)
    for pair in counted:
        groups[key(pair[1])].append(pair)
    return {name: gate_metrics([p[0] for p in pairs], [p[1] for p in pairs], has_model)
            for name, pairs in sorted(groups.items())}


def summarize_run(store: Store, run_id: int, baselines: BaselineCache | None = None) -> EvalSummary:
    """Every metric of the run, computed from the episodes and verdicts in the store."""
    run, records = load_records(store, run_id)
    entries = baselines.load() if baselines is not None else {}
    counted: list[tuple[EpisodeRecord, TaskRow]] = []
    flagged: list[FlaggedRow] = []
    turned_away = review_exclusions(store, sorted({r.task_id for r in records}))
    for record in records:
        why = flag_reason(record) or (turned_away[record.task_id].why if record.task_id in turned_away else "")
        row_status = task_row(record).status
        if why:
            flagged.append(FlaggedRow(episode_id=record.episode_id, task_id=record.task_id, sample=record.sample,
                                      why=why, status=row_status))
            continue
        timed = record.answer_timing()
        drift = baselines.drift(timed, entries) if baselines is not None and timed is not None else 0.0
        counted.append((record, task_row(record, drift)))
    mode = run_mode(run)
    has_model = mode != "generations"
    policies = sorted({r.policy for _, r in counted if r.policy})
    meta = RunMeta(id=run.id, name=run.name, model=run.model, mode=mode, task_source=run.task_source,
                   status=run.status, created=run.created.isoformat(), policies=policies,
                   samples=int(run.config.get("samples", 1) or 1), env=_env(records))
    return EvalSummary(
        run=meta,
        overall=gate_metrics([p[0] for p in counted], [p[1] for p in counted], has_model),
        by_level=_grouped(counted, lambda r: f"L{r.level}" if r.level else "unknown", has_model),
        by_category=_grouped(counted, lambda r: r.category, has_model),
        tasks=[p[1] for p in counted], flagged=flagged)
