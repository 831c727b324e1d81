"""The dataset card (README.md): what the data is, where it came from, licenses, counts per bucket, decontamination."""

from __future__ import annotations

from kernelmosaic.sft.report import ExportReport
from kernelmosaic.sft.writer import META_COLUMNS

__all__ = ["dataset_card"]

_VARIANTS = {
    "full": "every message of the episode: system prompt, task, each assistant turn as sent (content, reasoning, "
            "tool calls with ids), one tool message per call",
    "final_answer": "the system prompt and task, then only the recorded `write_candidate` call of the verified "
                    "answer and its tool message, and the recorded `submit` call and its message",
    "first_timed_pass": "the trajectory up to the tool messages of the turn whose verdict first passed, with timing, a "
                        "kernel that was verified as it stood (the optimization that followed is cut); an episode "
                        "with no such turn is left out",
}


def _front_matter(report: ExportReport) -> list[str]:
    lines = ["---", f"license: {report.config.license.lower()}", "task_categories:", "- text-generation",
             "tags:", "- cuda", "- kernels", "- tool-calling", "- trajectories", "configs:"]
    for variant in report.rows:
        lines += [f"- config_name: {variant}", "  data_files:", "  - split: train", f"    path: {variant}.parquet"]
    return lines + ["---", ""]


def _decontamination(report: ExportReport) -> list[str]:
    if not report.decontamination:
        return ["No evaluation set was checked (`--against` not given): overlap with benchmarks is unknown.", ""]
    lines = []
    for d in report.decontamination:
        lines.append(f"- `{d.against}`: {d.checked} tasks checked against {d.against_count}; "
                     f"{len({m.task_id for m in d.matches})} overlapping.")
    action = "kept (`keep_overlaps`)" if report.config.keep_overlaps else "dropped"
    lines.append(f"\nEpisodes of overlapping tasks: {len(report.overlap_episodes)}, {action}.\n")
    matches = [m for d in report.decontamination for m in d.matches]
    if matches:
        lines += ["| task | evaluation problem | AST similarity | token Jaccard |", "|---|---|---|---|"]
        lines += [f"| {m.task_id} | {m.against_id} | {m.ast_similarity:.3f} | {m.token_jaccard:.3f} |" for m in matches]
    return lines + [""]


def dataset_card(report: ExportReport) -> str:
    c = report.config
    lines = _front_matter(report) + [
        f"# {c.name}", "",
        "Agent trajectories of KernelMosaic: a model writes, compiles, tests, repairs and optimizes a kernel through "
        "tools, judged by KernelMosaic's verifier. Only episodes with a *verified* solution (`contracts.verified`: "
        "latest verdict accepted, timed, no rejecting finding, sanitized on CUDA, task unflagged) are included.", "",
        "## Format", "",
        "TRL's conversational tool-calling format, one row per episode: `messages` (assistant turns with `tool_calls` "
        "`{id, type: function, function: {name, arguments}}`, arguments as objects, reasoning as `reasoning_content`; "
        "`tool` turns with `tool_call_id` and `name`) and `tools` (JSON-schema functions as offered to the model), "
        "stored as JSON values. Metadata columns: " + ", ".join(f"`{m}`" for m in META_COLUMNS) + ".", "",
        "| variant | rows | what a row holds |", "|---|---|---|",
    ]
    lines += [f"| {v} | {n} | {_VARIANTS[v]} |" for v, n in report.rows.items()]
    lines += ["", "Each variant is a `datasets.load_from_disk` folder (`VARIANT/`) and a Parquet file (`VARIANT.parquet`).",
              "", "## Sources", "", "| run | model | tasks | episodes |", "|---|---|---|---|"]
    lines += [f"| {s.run_id} | {s.model} | {s.task_source} | {s.episodes} |" for s in report.sources]
    lines += ["", "## Licenses", "", f"Dataset: {c.license}. Tasks, by provenance:", ""]
    lines += [f"- {src}: {lic or 'not stated'}" for src, lic in sorted(report.task_licenses.items())] or ["- none"]
    f = c.filters
    tokens = "counted with the training tokenizer" if report.tokens_exact else "estimated at 4 characters a token"
    lines += ["", "## Selection", "",
              f"Not eligible: {dict(report.skipped) or 'none'}. Filters: minimum speedup vs eager {f.min_speedup:g} "
              f"(0: none), maximum tokens {f.max_tokens or 'none'} ({tokens}), near-duplicates "
              f"{'dropped at Jaccard >= ' + format(f.near_duplicate_threshold, 'g') if f.drop_near_duplicates else 'kept'}. "
              f"Dropped: { {k: len(v) for k, v in report.filters.dropped.items()} or 'none'}.",
              f"Sampling: {'by ' + c.balance.by + ' to ' + str(c.balance.ratios) if c.balance.by else 'none'}.", ""]
    for variant, episodes in report.left_out.items():
        lines += [f"Left out of `{variant}` (no tool result holds a verified kernel): episodes "
                  f"{', '.join(map(str, episodes))}.", ""]
    if report.review_excluded:
        lines += ["Tasks the review turned away (their verified episodes are not in the data):", ""]
        lines += [f"- {r.task_id}: {r.why}" for r in report.review_excluded] + [""]
    lines += ["## Counts per bucket", "", report.counts.markdown(), "## Decontamination", ""]
    lines += _decontamination(report)
    return "\n".join(lines)
