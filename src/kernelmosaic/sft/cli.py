"""`kernelmosaic sft export|train`: trajectories to training data, and the training recipe."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kernelmosaic.sft.config import ConfigError, ExportConfig, load_config

__all__ = ["app"]

app = typer.Typer(no_args_is_help=True, pretty_exceptions_enable=False)


def _fail(message: str) -> typer.Exit:
    Console(stderr=True).print(f"[red]error:[/red] {escape(message)}", highlight=False, soft_wrap=True)
    return typer.Exit(2)


def _parse_set(pairs: list[str]) -> dict[str, object]:
    """`--set key=value` pairs; the value is read as JSON when it parses (numbers, booleans, lists), else as text."""
    out: dict[str, object] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise _fail(f"--set {pair!r}: expected KEY=VALUE (e.g. lora.r=8)")
        try:
            out[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            out[key.strip()] = value
    return out


@app.command("export")
def export_command(
    out: Path = typer.Option(..., "--out", help="Output folder: VARIANT/ (load_from_disk), VARIANT.parquet, README.md, "
                             "counts.{json,md}, export.json."),
    db: str | None = typer.Option(None, "--db", envvar="KERNELMOSAIC_DB", help="Store URL (default ./kernelmosaic.db)."),
    run: list[int] = typer.Option([], "--run", help="Run id to export (repeatable; default: every run)."),
    tasks: str | None = typer.Option(None, "--tasks", help="Task source of the runs' tasks (default: each run's own)."),
    against: list[str] = typer.Option([], "--against", help="Evaluation set to decontaminate against, e.g. "
                                      "kernelbench:PATH (repeatable)."),
    keep_overlaps: bool = typer.Option(False, "--keep-overlaps", help="Keep episodes whose task overlaps (listed)."),
    min_speedup: float | None = typer.Option(None, "--min-speedup", help="Minimum speedup vs eager of the answer."),
    max_tokens: int | None = typer.Option(None, "--max-tokens", help="Maximum tokens of a full trajectory."),
    tokenizer: str | None = typer.Option(None, "--tokenizer", help="Tokenizer folder that counts tokens."),
    config: Path | None = typer.Option(None, "--config", help="TOML file whose [export] table is an ExportConfig."),
    sets: list[str] = typer.Option([], "--set", help="Override any config field: KEY=VALUE, e.g. balance.by=difficulty."),
) -> None:
    """Verified episodes to TRL's conversational tool-calling format, filtered, decontaminated and balanced."""
    from kernelmosaic.sft.collect import ExportError
    from kernelmosaic.sft.conversation import ConversationError
    from kernelmosaic.sft.export import export_dataset
    from kernelmosaic.store import StoreError, open_store

    overrides = {"runs": run or None, "tasks": tasks, "against": against or None, "keep_overlaps": keep_overlaps or None,
                 "filters.min_speedup": min_speedup, "filters.max_tokens": max_tokens, "filters.tokenizer": tokenizer,
                 **_parse_set(sets)}
    try:
        settings: ExportConfig = load_config(config, overrides)
        with open_store(db) as store:
            report = export_dataset(store, settings, out)
    except (ConfigError, ExportError, ConversationError, StoreError) as exc:
        raise _fail(str(exc)) from None
    console = Console()
    table = Table("dimension", "bucket", *report.counts.stages, title="episodes per bucket")
    for row in report.counts.rows():
        table.add_row(*row)
    console.print(table)
    console.print(f"rows: {report.rows}; not eligible: {report.skipped or 'none'}; "
                  f"overlapping tasks: {', '.join(report.overlapping_tasks) or 'none'}", highlight=False)
    console.print(f"written to {out} (README.md is the dataset card)", highlight=False)


@app.command("train")
def train_command(
    config: Path = typer.Argument(..., help="TOML file whose [train] table is a TrainConfig."),
    sets: list[str] = typer.Option([], "--set", help="Override any config field: KEY=VALUE, e.g. max_steps=100."),
    resume: bool = typer.Option(False, "--resume", help="Continue from the latest checkpoint in output_dir."),
) -> None:
    """Fine-tune on an exported variant (TRL SFTTrainer, assistant-only loss, LoRA or full)."""
    from kernelmosaic.sft.train_config import TrainConfig

    overrides = {**_parse_set(sets), "resume": True if resume else None}
    try:
        settings: TrainConfig = load_config(config, overrides, table="train", model=TrainConfig)
    except ConfigError as exc:
        raise _fail(str(exc)) from None
    try:
        from kernelmosaic.sft.train import train
    except ImportError as exc:
        raise _fail(f"training needs the [train] extra ({exc.name} is missing): pip install -e '.[train]'") from None
    try:
        result = train(settings)
    except ValueError as exc:
        raise _fail(f"{config}: {exc}") from None
    console = Console()
    console.print_json(result.model_dump_json())
    if result.serving_path:
        console.print(f"run it: kernelmosaic generate --model hf:{result.serving_path}", highlight=False)
