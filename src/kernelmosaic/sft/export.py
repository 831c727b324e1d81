"""`sft export`: verified episodes -> filters -> decontamination -> sampling -> one dataset per variant, with the
table of counts at each stage, a report and a dataset card."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from kernelmosaic.sft.buckets import sample_to_ratios
from kernelmosaic.sft.card import dataset_card
from kernelmosaic.sft.collect import Candidate, ExportError, collect_verified
from kernelmosaic.sft.config import ExportConfig
from kernelmosaic.sft.conversation import check_tool_pairing, episode_messages, trl_messages, trl_tools
from kernelmosaic.sft.filters import apply_filters
from kernelmosaic.sft.metadata import (
    EpisodeMeta,
    TokenCounter,
    episode_meta,
    estimate_tokens,
    template_token_counter,
)
from kernelmosaic.sft.report import ExportReport, RunSource
from kernelmosaic.sft.variants import NoVerifiedCut, variant_messages
from kernelmosaic.sft.writer import write_variant
from kernelmosaic.store import Store
from kernelmosaic.tasks.decontam import decontaminate
from kernelmosaic.tasks.schema import Task

__all__ = ["export_dataset"]

log = logging.getLogger(__name__)


def _token_counter(path: str) -> tuple[TokenCounter, bool]:
    if not path:
        return estimate_tokens, False
    try:
        import transformers

        return template_token_counter(transformers.AutoTokenizer.from_pretrained(path)), True
    except (ImportError, OSError, ValueError) as exc:
        raise ExportError(f"filters.tokenizer {path!r}: cannot load the tokenizer: {exc}") from None


def _assistant_text(messages: list[dict[str, Any]]) -> str:
    parts = []
    for m in messages:
        if m["role"] == "assistant":
            parts.append(m["content"])
            parts += [json.dumps(c["function"], sort_keys=True) for c in m.get("tool_calls", [])]
    return "\n".join(parts)


def _overlaps(tasks: list[Task], against: list[str], report: ExportReport) -> set[str]:
    from kernelmosaic.tasks.sources import load_tasks

    for source in against:
        try:
            evaluation = load_tasks(source)
        except Exception as exc:  # noqa: BLE001 - any loader failure is reported with its source
            raise ExportError(f"--against {source!r}: cannot load: {exc}") from None
        report.decontamination.append(decontaminate(tasks, evaluation, against_name=source))
    return {m.task_id for d in report.decontamination for m in d.matches}


def _prepare(episodes: list[Candidate], count: TokenCounter, exact: bool) -> tuple[list[EpisodeMeta], list[str]]:
    metas, texts = [], []
    for c in episodes:
        where = f"episode {c.episode_id} ({c.trajectory.task_id}, run {c.run.id})"
        full = episode_messages(c.trajectory)
        check_tool_pairing(full, where)
        messages, tools = trl_messages(full), trl_tools(c.trajectory.tools)
        metas.append(episode_meta(c.trajectory, c.task, c.episode_id, c.run.id, count(messages, tools), exact))
        texts.append(_assistant_text(messages))
    return metas, texts


def export_dataset(store: Store, config: ExportConfig, out: Path, tasks: list[Task] | None = None) -> ExportReport:
    """Write the dataset into `out` and return what was done. `tasks` overrides `config.tasks` (for callers that
    hold the tasks already)."""
    out = Path(out)
    collected = collect_verified(store, config.runs, tasks if tasks is not None else config.tasks)
    count, exact = _token_counter(config.filters.tokenizer)
    report = ExportReport(config=config, skipped=dict(collected.skipped), tokens_exact=exact,
                          review_excluded=list(collected.review_excluded.values()))
    episodes = collected.episodes
    metas, texts = _prepare(episodes, count, exact)
    edges = config.balance.gain_edges
    report.counts.add_stage("verified", metas, edges)

    report.filters = apply_filters(metas, texts, config.filters)
    keep = report.filters.kept
    report.counts.add_stage("filtered", [metas[i] for i in keep], edges)

    overlapping = _overlaps(list({episodes[i].task.id: episodes[i].task for i in keep}.values()), config.against, report)
    report.overlapping_tasks = sorted(overlapping)
    report.overlap_episodes = [metas[i].episode_id for i in keep if metas[i].task_id in overlapping]
    if not config.keep_overlaps:
        keep = [i for i in keep if metas[i].task_id not in overlapping]
    if config.against:
        report.counts.add_stage("decontaminated", [metas[i] for i in keep], edges)

    keep = [keep[j] for j in sample_to_ratios([metas[i] for i in keep], config.balance)]
    if config.balance.by:
        report.counts.add_stage("sampled", [metas[i] for i in keep], edges)

    out.mkdir(parents=True, exist_ok=True)
    for variant in config.variants:
        rows = []
        for i in keep:
            c, meta = episodes[i], metas[i]
            try:
                messages = variant_messages(c.trajectory, variant)
            except NoVerifiedCut:
                report.left_out.setdefault(variant, []).append(c.episode_id)
                continue
            check_tool_pairing(messages, f"episode {c.episode_id} ({variant})")
            rows.append({"messages": trl_messages(messages), "tools": trl_tools(c.trajectory.tools),
                         **meta.model_dump(), "spec_source": meta.spec_source})
        report.rows[variant] = write_variant(rows, out / variant, out / f"{variant}.parquet")
    kept_runs = [metas[i].run_id for i in keep]
    report.sources = [RunSource(run_id=r.id, model=r.model, task_source=r.task_source, episodes=kept_runs.count(r.id))
                      for r in collected.runs]
    licenses: dict[str, set[str]] = {}
    for i in keep:
        provenance = episodes[i].task.provenance
        licenses.setdefault(provenance.source, set()).add(provenance.license)
    report.task_licenses = {src: ", ".join(sorted(x for x in lic if x)) for src, lic in licenses.items()}
    (out / "counts.json").write_text(report.counts.model_dump_json(indent=1), encoding="utf-8")
    (out / "counts.md").write_text(report.counts.markdown(), encoding="utf-8")
    (out / "export.json").write_text(report.model_dump_json(indent=1), encoding="utf-8")
    (out / "README.md").write_text(dataset_card(report), encoding="utf-8")
    log.info("exported %s into %s", report.rows, out)
    return report



