"""`kernelmosaic generate`: run agent episodes over a task set, with a live view; `--resume` continues a run."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import typer
from rich.console import Console
from rich.live import Live

from kernelmosaic.agent.config import AgentConfig, Budgets
from kernelmosaic.agent.live import RunView
from kernelmosaic.agent.runner import (
    GenerateConfig,
    recorded_device,
    replayable,
    run_tasks,
    select_tasks,
    start_or_resume_run,
)
from kernelmosaic.agent.verifiers import VerifierSet

__all__ = ["generate_command"]


def _fail(message: str) -> typer.Exit:
    Console(stderr=True).print(f"[red]error:[/red] {message}", highlight=False)
    return typer.Exit(2)


def _default_device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def generate_command(
    run_id: int | None = typer.Argument(None, help="With --resume: the run to resume (default: the latest run)."),
    tasks: str = typer.Option("builtin", "--tasks", help="Task source: builtin, a folder, a .parquet file, kernelbench:PATH."),
    model: str = typer.Option("replay:bundled", "--model", help="Model spec: openai:NAME, hf:PATH, replay:FILE|bundled, scripted:NAME."),
    max_turns: int = typer.Option(Budgets().max_turns, "--max-turns", help="Model queries per episode."),
    concurrency: int = typer.Option(4, "--concurrency", help="Episodes running at once."),
    device: str | None = typer.Option(None, "--device", help="cuda or cpu (default: a replay's recorded device, else cuda "
                                      "when available)."),
    db: str | None = typer.Option(None, "--db", envvar="KERNELMOSAIC_DB", help="Store URL (default ./kernelmosaic.db)."),
    limit: int = typer.Option(0, "--limit", help="At most this many tasks (0: all)."),
    task: list[str] = typer.Option([], "--task", help="Only this task id (repeatable)."),
    resume: bool = typer.Option(False, "--resume", help="Continue a run (RUN_ID, or the latest) with its stored settings."),
    out: Path = typer.Option(Path("runs"), "--out", help="Directory for run folders (problem, candidates, trajectory JSON)."),
    compile_baseline: bool | None = typer.Option(None, "--compile-baseline/--no-compile-baseline",
                                                 help="Time torch.compile baselines in benchmark() (default: on cuda only)."),
    live: bool = typer.Option(True, "--live/--no-live", help="Show the live view."),
) -> None:
    """Run agent episodes (write, compile, test, repair, optimize) over a task set and record them in the store."""
    from kernelmosaic.models import ModelError, get_model
    from kernelmosaic.store import StoreError, open_store
    from kernelmosaic.tasks import TaskFormatError, load_tasks

    if run_id is not None and not resume:
        raise _fail(f"a run id ({run_id}) is only accepted with --resume")
    if device not in (None, "cuda", "cpu"):
        raise _fail(f"--device must be cuda or cpu, not {device!r}")
    console = Console()
    try:
        store = open_store(db)
        if resume:
            rid, config = start_or_resume_run(store, None, run_id or "latest")
            config = config.model_copy(update={"concurrency": concurrency})
        else:
            # A recording replays on the device it was made on: its candidates are written for that device.
            dev = device or recorded_device(model) or _default_device()
            config = GenerateConfig(
                tasks=tasks, model=model, task_ids=task, limit=limit, concurrency=concurrency, out_dir=out,
                compile_baseline=dev == "cuda" if compile_baseline is None else compile_baseline,
                agent=AgentConfig(device=dev, budgets=Budgets(max_turns=max_turns)))
        selected = select_tasks(replayable(load_tasks(config.tasks), config.model), config.task_ids, config.limit)
        backend = get_model(config.model)
        if not resume:  # only once the tasks and the model are known to be usable
            rid, _ = start_or_resume_run(store, config, None)
    except (StoreError, TaskFormatError, ModelError, ValueError) as exc:
        raise _fail(str(exc)) from exc
    pending = store.pending_tasks(rid, [t.id for t in selected])
    view = RunView(rid, config.model, config.agent.device, len(selected), already_done=len(selected) - len(pending))
    display = Live(view, console=console, refresh_per_second=4) if live else contextlib.nullcontext()
    with VerifierSet(config.verify_config()) as verifiers, display:
        # Host timing on CPU is only indicative, so achieved-vs-peak figures are shown for CUDA only.
        peaks = verifiers.device_peaks if config.agent.device == "cuda" else None
        asyncio.run(run_tasks(selected, store=store, verifier_for=verifiers, backend=backend, run_id=rid, config=config,
                              peaks=peaks, on_step=view.on_step, on_done=view.on_done))
    if live:
        console.line()
    if not store.pending_tasks(rid, [t.id for t in selected]):
        store.finish_run(rid, "done")
    summary = store.run_summary(rid)
    console.print(f"run {rid}: {summary.done} done, {summary.failed} failed, solved {summary.solved} "
                  f"(pass rate {summary.pass_rate:.0%}), geomean speedup {summary.geomean_speedup_vs_eager:.2f}x; "
                  f"trajectories in {config.out_dir / f'run-{rid}' / 'trajectories'}")
