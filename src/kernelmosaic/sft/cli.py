"""`kernelmosaic sft export|train|tiny-base`: trajectories to training data, the training recipe, and a tiny random
base model for showing the loop without real weights."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

import typer
from pydantic import BaseModel
from rich.table import Table

from kernelmosaic.commands import Console, fail
from kernelmosaic.config import DEFAULT_FILE, ConfigError, build, read_config
from kernelmosaic.sft.quiet import quiet_libraries

__all__ = ["app"]

app = typer.Typer(no_args_is_help=True, pretty_exceptions_enable=False)




def _unknown_key(key: str, model: type[BaseModel], section: str) -> ConfigError:
    """A bare `--set KEY=...` whose key this command's section does not have: the nearest one and the rest."""
    near = difflib.get_close_matches(key, list(model.model_fields), n=1, cutoff=0.6)
    hint = f" (did you mean `{section}.{near[0]}`?)" if near else ""
    return ConfigError(f"--set: [{section}] has no key `{key}`{hint}; known keys: {', '.join(sorted(model.model_fields))}")


def _settings(model: type[BaseModel], section: str, path: Path | None, sets: list[str], flags: dict) -> Any:
    """`[section]` of the config file (./kernelmosaic.toml when present), then `--set section.KEY=VALUE`, then flags."""
    for item in sets:  # a bare key is this section's; a dotted one is checked by read_config against the schema
        key = item.partition("=")[0]
        if "." not in key:
            if key in model.model_fields:
                raise ConfigError(f"--set {item!r}: this command reads [{section}]; name it: --set {section}.{item}")
            raise _unknown_key(key, model, section)
    tree = read_config(path, sets, reads=(section,))
    given: Any = tree
    for part in section.split("."):  # [sft.train] is a table in a table
        given = given.get(part, {}) if isinstance(given, dict) else {}
    given = {**given, **{k: v for k, v in flags.items() if v is not None}}
    missing = [name for name, field in model.model_fields.items() if field.is_required() and name not in given]
    if missing:  # the first thing a newcomer meets: say where the settings are looked for, not "Field required"
        raise ConfigError(_needs(section, missing, tree.get("__file__")))
    return build(model, tree, section, flags=flags)


def _needs(section: str, missing: list[str], found: str | None) -> str:
    """Required keys of `[section]` that neither the settings file (`found`, None when there is none) nor `--set`
    gave: where the command looked, and the two ways to give them."""
    command, first = section.replace(".", " "), missing[0]
    more = f" (and {', '.join(missing[1:])})" if missing[1:] else ""
    more_set = f" (and {', '.join(f'{section}.{k}' for k in missing[1:])})" if missing[1:] else ""
    where = (f"{found} has no [{section}] {', '.join(missing)}" if found else
             f"no settings file was found (./{DEFAULT_FILE}, or --config FILE)")
    return (f"{where}: `{command}` needs [{section}] {first} = ...{more} in ./{DEFAULT_FILE} or --config FILE, or "
            f"--set {section}.{first}=...{more_set}")


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
    config: Path | None = typer.Option(None, "--config", help=f"Settings file (TOML; default ./{DEFAULT_FILE} when "
                                       "present) whose [sft.export] section is an ExportConfig."),
    sets: list[str] = typer.Option([], "--set", help="Override one field: sft.export.KEY=VALUE, e.g. "
                                   "--set sft.export.balance.by=difficulty (repeatable)."),
) -> None:
    """Verified episodes to TRL's conversational tool-calling format, filtered, decontaminated and balanced."""
    from kernelmosaic.sft.collect import ExportError
    from kernelmosaic.sft.config import ExportConfig
    from kernelmosaic.sft.conversation import ConversationError
    from kernelmosaic.sft.export import export_dataset
    from kernelmosaic.store import StoreError, open_store

    flags = {"runs": run or None, "tasks": tasks, "against": against or None, "keep_overlaps": keep_overlaps or None,
             "filters": {"min_speedup": min_speedup, "max_tokens": max_tokens, "tokenizer": tokenizer}}
    try:
        settings: ExportConfig = _settings(ExportConfig, "sft.export", config, sets, flags)
        with open_store(db) as store, quiet_libraries():
            report = export_dataset(store, settings, out)
    except (ConfigError, ExportError, ConversationError, StoreError) as exc:
        raise fail(str(exc)) from None
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
    config_arg: Path | None = typer.Argument(None, metavar="CONFIG", help="Same as --config."),
    config: Path | None = typer.Option(None, "--config", help=f"Settings file (TOML; default ./{DEFAULT_FILE} when "
                                       "present) whose [sft.train] section is a TrainConfig."),
    sets: list[str] = typer.Option([], "--set", help="Override one field: sft.train.KEY=VALUE, e.g. "
                                   "--set sft.train.max_steps=100 (repeatable)."),
    resume: bool = typer.Option(False, "--resume", help="Continue from the latest checkpoint in output_dir."),
) -> None:
    """Fine-tune on an exported variant (TRL SFTTrainer, assistant-only loss, LoRA or full)."""
    from kernelmosaic.sft.train_config import TrainConfig

    if config_arg is not None and config is not None:
        raise fail(f"give the settings file once: CONFIG ({config_arg}) or --config ({config})")
    config = config or config_arg
    try:
        settings: TrainConfig = _settings(TrainConfig, "sft.train", config, sets, {"resume": True if resume else None})
    except ConfigError as exc:
        raise fail(str(exc)) from None
    try:
        from kernelmosaic.sft.train import train
    except ImportError as exc:
        raise fail(f"training needs the [train] extra ({exc.name} is missing): pip install -e '.[train]'") from None
    Console(stderr=True, highlight=False).print(
        f"sft train: loading {settings.model} and tokenizing {settings.dataset} (a minute on a CPU before the first step)",
        markup=False)
    try:
        with quiet_libraries():
            result = train(settings)
    except ValueError as exc:
        raise fail(f"{config or 'sft train'}: {exc}") from None
    console = Console()
    console.print_json(result.model_dump_json())
    if result.serving_path:
        console.print(f"run it: kernelmosaic generate --model hf:{result.serving_path}", highlight=False)


@app.command("tiny-base")
def tiny_base_command(
    data: Path = typer.Option(..., "--data", help="An exported variant (e.g. OUT/full) whose text trains the tokenizer."),
    out: Path = typer.Option(..., "--out", help="Folder for the model and its tokenizer (then [sft.train] model)."),
    hidden: int = typer.Option(64, "--hidden", min=16, help="Hidden size (a multiple of 16)."),
    layers: int = typer.Option(2, "--layers", min=1, help="Transformer layers."),
) -> None:
    """A tiny random-weight base model, to show training where no real weights are at hand (it learns nothing useful)."""
    try:
        from kernelmosaic.sft.tiny import build_tiny_base
    except ImportError as exc:
        raise fail(f"the tiny base needs the [hf] extra ({exc.name} is missing): pip install -e '.[hf]'") from None
    try:
        with quiet_libraries():
            build_tiny_base(data, out, hidden=hidden, layers=layers)
    except ValueError as exc:
        raise fail(str(exc)) from None
    Console().print(f"random-weight base model in {out}: a demonstration of the loop, not a model that writes kernels",
                    highlight=False)
