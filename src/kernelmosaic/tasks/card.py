"""The dataset card (README.md) written beside every export: counts, forms, audits, provenance, hashes."""

from __future__ import annotations

from collections import Counter

from kernelmosaic.tasks.schema import TASK_SCHEMA, Task

__all__ = ["dataset_card"]


def _table(counter: Counter, head: str) -> list[str]:
    lines = [f"| {head} | tasks |", "|---|---|"]
    lines += [f"| {key} | {n} |" for key, n in sorted(counter.items(), key=lambda kv: str(kv[0]))]
    return lines


def dataset_card(tasks: list[Task], name: str, data_glob: str = "", fmt: str = "kernelmosaic") -> str:
    """Markdown with Hugging Face front matter; `data_glob` (e.g. `data/*.parquet`) declares the data files."""
    licenses = sorted({t.provenance.license for t in tasks if t.provenance.license}) or ["unknown"]
    front = ["---", f"license: {licenses[0].lower() if len(licenses) == 1 else 'other'}",
             "tags:", "- cuda", "- kernels", "- code", "pretty_name: " + name]
    if data_glob:
        front += ["configs:", "- config_name: default", "  data_files:", "  - split: train", f"    path: {data_glob}"]
    front.append("---")
    audited = [t for t in tasks if t.audit is not None]
    with_spec = sum(t.has_spec for t in tasks)
    body = [
        f"# {name}", "",
        f"{len(tasks)} kernel-writing tasks exported by KernelMosaic ({fmt} format, task schema `{TASK_SCHEMA}`).",
        "Each task has a natural-language statement and a KernelBench-format PyTorch reference "
        "(`Model`, `get_inputs`, `get_init_inputs`); some also carry a math spec in KernelMosaic's "
        "tensor-index language.", "",
        "## Contents", "",
        f"- with a math spec: {with_spec}",
        f"- audited: {len(audited)} ({sum(t.audit.passed for t in audited)} passed)",
        f"- licenses: {', '.join(licenses)}", "",
        *_table(Counter(t.level for t in tasks), "level"), "",
        *_table(Counter(t.category for t in tasks), "category"), "",
        *_table(Counter(t.provenance.source for t in tasks), "source"), "",
        *_table(Counter(t.review.state for t in tasks), "review state"), "",
        "## Fields", "",
        "`reference_hash` is the sha256 of the reference with comments and all whitespace removed, so "
        "reformatting keeps it and any edit changes it. Shapes: module constants of the reference are the "
        "default (GPU-sized) shapes; `shapes.small` overrides them for CPU tests.", "",
        "## Known limits", "",
        "Audits check references for degenerate outputs, nondeterminism and spec/reference disagreement on "
        "small shapes on CPU; they do not prove the task is interesting or free of overlap with benchmarks "
        "(run `kernelmosaic tasks decontam` for that).",
    ]
    return "\n".join(front + [""] + body) + "\n"
