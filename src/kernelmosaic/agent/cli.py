"""`kernelmosaic generate`: run agent episodes over a task set, with a live view; `--resume` continues a run."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import typer
from rich.live import Live
from rich.markup import escape

from kernelmosaic.agent.config import Budgets
from kernelmosaic.agent.episode import MODEL_UNUSABLE
from kernelmosaic.agent.interrupt import Interrupted, run_interruptibly
from kernelmosaic.agent.live import RunView
from kernelmosaic.agent.runner import (
    GenerateConfig,
    TaskPlan,
    final_failures,
    plan_tasks,
    recorded_device,
    recorded_models,
    start_or_resume_run,
)
from kernelmosaic.agent.solver import AGENT
from kernelmosaic.commands import Console, Device, fail
from kernelmosaic.config import DEFAULT_FILE, build, read_config
from kernelmosaic.runs.config import owned_setting
from kernelmosaic.runs.task_meta import task_meta
from kernelmosaic.store import Store
from kernelmosaic.store.backends import db_option, new_sqlite_file, remove_sqlite_file
from kernelmosaic.store.records import EpisodeInfo, speedup_summary
from kernelmosaic.tasks.schema import Task
from kernelmosaic.verify.progress import DoneLines
from kernelmosaic.verify.ray.cluster import portable_url
from kernelmosaic.verify.ray.options import RayAddress
from kernelmosaic.verify.settings import run_device, verify_settings
from kernelmosaic.verify.stopping import request_stop

if TYPE_CHECKING:
    from kernelmosaic.curate.review.gate import ReviewGate
    from kernelmosaic.models.base import ModelBackend
    from kernelmosaic.runs.executor import Executor

__all__ = ["generate_command"]




def _resume_config(store: Store, run_id: int | None, given: dict[str, object]) -> tuple[int, GenerateConfig, list[str]]:
    """The stored run and its settings; an option given on the command line must agree with them."""
    rid, config = start_or_resume_run(store, None, run_id or "latest")
    stored = {"model": config.model, "max_turns": config.agent.budgets.max_turns, "device": config.agent.device,
              "tasks": config.tasks}
    conflicts = [f"--{k.replace('_', '-')} {v} (run {rid} uses {stored[k]})" for k, v in given.items()
                 if v is not None and k in stored and v != stored[k]]
    if conflicts:
        raise ValueError("--resume continues a run with its stored settings; these options disagree: "
                         + "; ".join(conflicts) + ". Start a new run instead, or leave them out.")
    notes = [f"resuming run {rid} with its stored settings: model {config.model}, tasks {config.tasks}, "
             f"device {config.agent.device}, max turns {config.agent.budgets.max_turns}"]
    return rid, config, notes


def _new_config(tree: dict, flags: dict, device: str | None, max_turns: int | None) -> GenerateConfig:
    """Defaults, then the file's [generate] section, then --set, then explicit flags; [model] and [verify] ride along."""
    section = tree.get("generate", {}) if isinstance(tree.get("generate"), dict) else {}
    model = flags["model"] or section.get("model") or "replay:bundled"
    # A recording replays on the device it was made on: its candidates are written for that device.
    verify = tree.get("verify") if isinstance(tree.get("verify"), dict) else {}
    dev = run_device(device, verify, section.get("agent", {}).get("device"), recorded_device(model))
    # [generate] compile_baseline is this run's own setting from the file; [verify]'s is the same setting one level out
    given_baseline = owned_setting(flags["compile_baseline"], section, "compile_baseline", None)
    flags = {**flags, "model": model,
             "compile_baseline": owned_setting(given_baseline, verify, "compile_baseline", dev == "cuda"),
             "origin_model": recorded_models(model), "agent": {"device": dev, "budgets": {"max_turns": max_turns}},
             "model_options": tree.get("model"), "verify": tree.get("verify")}
    config = build(GenerateConfig, tree, "generate", flags=flags)
    config.verify_config()  # a bad [verify] value fails now, naming the key, not in the first episode
    # cuda on a machine without a GPU is refused now, in one sentence, as `verify` refuses it (not once per episode)
    verify_settings({}, {"device": config.agent.device})
    return config


def _say_done(console: Console, lines: DoneLines, info: EpisodeInfo) -> None:
    """A line per episode where no live view shows them; on a terminal, only the episodes that could not run."""
    if lines.enabled:
        outcome = "failed" if info.status == "failed" else (
            "solved" if info.solved else "flagged" if info.best_candidate_sha256 and info.task_flags else "not solved")
        caveat = f" ({info.best_speedup_caveat})" if info.best_speedup_caveat else ""
        speed = f", {info.best_speedup_vs_eager:.2f}x vs eager{caveat}" if info.best_speedup_vs_eager > 0 else ""
        why = f": {info.exit_detail}" if info.exit_detail and not info.solved else ""  # a solved one's is "Submitted..."
        lines.say(info.task_id, outcome, info.totals.wall_seconds,
                  f"{info.exit_reason}{speed}, {info.totals.turns} turn(s){why}")
    elif info.status == "failed" or info.exit_reason == "model_error":
        console.print(f"[red]task {escape(info.task_id)}: {info.status} ({info.exit_reason})[/red]: "
                      f"{escape(info.exit_detail or 'no detail')}", highlight=False, soft_wrap=True, emoji=False)


def generate_command(
    run_id: int | None = typer.Argument(None, help="With --resume: the run to resume (default: the latest run)."),
    tasks: str | None = typer.Option(None, "--tasks", help="Task source: builtin, a folder, a .parquet file, "
                                     "kernelbench:PATH (default: builtin)."),
    model: str | None = typer.Option(None, "--model", help="Model spec: openai:NAME, hf:PATH, replay:FILE|bundled, "
                                     "scripted:NAME (default: replay:bundled, hand-written demonstrations)."),
    max_turns: int | None = typer.Option(None, "--max-turns", min=1, help=f"Model queries per episode (default {Budgets().max_turns})."),
    concurrency: int | None = typer.Option(None, "--concurrency", help="Episodes running at once (default 4)."),
    device: Device = None,
    db: str | None = typer.Option(None, "--db", envvar="KERNELMOSAIC_DB", help="Store URL (default ./kernelmosaic.db)."),
    limit: int | None = typer.Option(None, "--limit", help="At most this many tasks (default 0: all)."),
    task: list[str] = typer.Option([], "--task", help="Only this task id (repeatable)."),
    resume: bool = typer.Option(False, "--resume", help="Continue a run (RUN_ID, or the latest) with its stored settings."),
    out: Path | None = typer.Option(None, "--out", help="Directory for run folders (problem, candidates, trajectory JSON; "
                                    "default ./runs)."),
    compile_baseline: bool | None = typer.Option(None, "--compile-baseline/--no-compile-baseline",
                                                 help="Time torch.compile baselines in benchmark() (default: [verify] compile_baseline, else on cuda only)."),
    include_flagged: bool | None = typer.Option(None, "--include-flagged", help="Also run tasks whose audit failed (their "
                                         "solutions are kept, marked, and never counted as solved)."),
    retry_failed: bool = typer.Option(False, "--retry-failed", help="With --resume: also retry episodes that failed "
                                      "with an infrastructure error."),
    live: bool = typer.Option(True, "--live/--no-live", help="Show the live view."),
    policy: Literal["strict", "kernelbench"] | None = typer.Option(None, "--policy", help="strict (every op of forward in custom kernels; default) or "
                                      "kernelbench (some ops may stay in PyTorch; the custom kernels' output must be used)."),
    executor: str | None = typer.Option(None, "--executor", help="local (this machine; default) or ray (episodes on "
                                        "a Ray cluster's episode actors, judgement on one judge actor per GPU; the "
                                        "[ray] extra; docs/scale.md). Default: [scale] executor."),
    ray_address: RayAddress = None,
    config_file: Path | None = typer.Option(None, "--config", help=f"Settings file (TOML; default ./{DEFAULT_FILE} when "
                                            "present): [generate], [model], [verify], [scale] sections. See docs/configuration.md."),
    sets: list[str] = typer.Option([], "--set", help="Override one setting: SECTION.KEY=VALUE, e.g. model.temperature=0.2, "
                                   "verify.trials=3, generate.agent.budgets.max_cost_usd=2 (repeatable)."),
) -> None:
    """Run agent episodes (write, compile, test, repair, optimize) over a task set and record them in the store."""
    if run_id is not None and not resume:
        raise fail(f"a run id ({run_id}) is only accepted with --resume")
    console = Console()
    flags = dict(tasks=tasks, model=model, task_ids=task or None, limit=limit, concurrency=concurrency, out_dir=out,
                 compile_baseline=compile_baseline, include_flagged=include_flagged)
    run = _prepare(db, config_file, sets, run_id if resume else None, resume, flags, device, max_turns, policy,
                   retry_failed, executor, ray_address)
    _say_plan(console, run)
    infos = _run_episodes(console, run, db, live)
    raise typer.Exit(_finish(console, run.store, run.rid, run.selected, infos, run.config, db))


@dataclass
class _Prepared:
    """A run ready to go: its store and id, settings, tasks, executor and model, and what to say first."""

    store: Store
    rid: int
    config: GenerateConfig
    selected: list[Task]
    plan: TaskPlan
    review: ReviewGate
    notes: list[str]
    runner: Executor
    make_backend: Callable[[], ModelBackend]
    resumed: bool


def _prepare(db: str | None, config_file: Path | None, sets: list[str], run_id: int | None, resume: bool,
             flags: dict, device: str | None, max_turns: int | None, policy: str | None, retry_failed: bool,
             executor: str | None, ray_address: str | None) -> _Prepared:
    """Settings, store, tasks, executor and model, checked before the run exists; exit 2 naming the problem (a new
    SQLite file made for a run that never started is removed again)."""
    from kernelmosaic.curate.review import apply_review
    from kernelmosaic.models import ModelError
    from kernelmosaic.store import StoreError, open_store
    from kernelmosaic.tasks import TaskFormatError, load_tasks
    from kernelmosaic.verify.ray.config import scale_settings

    notes: list[str] = []
    created = new_sqlite_file(db)  # removed again if this command fails before its run exists
    store = None
    try:
        tree = read_config(config_file, sets, reads=("generate", "model", "verify", "scale"))
        store = open_store(db)
        if resume:
            if config_file is not None or sets:
                raise ValueError("--resume continues a run with its stored settings; --config and --set are not taken")
            rid, config, notes = _resume_config(store, run_id, {"model": flags["model"], "max_turns": max_turns,
                                                                "device": device, "tasks": flags["tasks"]})
            config = config.model_copy(update={"concurrency": flags["concurrency"] or config.concurrency,
                                               "retry_failed": retry_failed})
        else:
            if policy is not None:
                tree = {**tree, "verify": {**tree.get("verify", {}), "policy": policy}}
            config = _new_config(tree, flags, device, max_turns)
        plan = plan_tasks(load_tasks(config.tasks), config.model_copy(update={"limit": 0}))
        reviewed, review = apply_review(store, plan.selected)
        selected = reviewed[: config.limit] if config.limit else reviewed
        if not selected:
            reasons = "; ".join(f"{i}: {why}" for i, why in plan.skipped.items()) or review.message
            raise ValueError(f"no task to run from {config.tasks} ({reasons})")
        runner = _executor(scale_settings(tree, executor, ray_address), config, db)
        try:
            make_backend = runner.model_factory(config.model, config.model_options)  # a bad model fails here
            if not resume:  # only once the tasks and the model are known to be usable
                config = config.model_copy(update={"task_meta": task_meta(selected)})  # what its report groups by
                rid, _ = start_or_resume_run(store, config, None)
        except BaseException:
            runner.close()
            raise
    except (StoreError, TaskFormatError, ModelError, ValueError, RuntimeError) as exc:
        if created is not None and store is not None:
            store.close()
            remove_sqlite_file(created)  # a store with no run in it: nothing to keep
        raise fail(str(exc)) from None
    return _Prepared(store, rid, config, selected, plan, review, notes, runner, make_backend, resume)


def _say_plan(console: Console, run: _Prepared) -> None:
    """What the run will do before it starts: resume notes, replayed recordings, review and audit skips."""
    for note in run.notes:
        console.print(note, highlight=False, markup=False)
    if run.config.origin_model:
        console.print(f"{run.config.model} replays recordings by {run.config.origin_model}; every candidate is "
                      "verified again", highlight=False)
    if run.review.reviewed:
        console.print(run.review.message, highlight=False, markup=False)
    for note in run.plan.notes:
        console.print(note, highlight=False, markup=False)
    for task_id, why in run.plan.skipped.items():
        hint = " (--include-flagged runs it, marked)" if why.startswith("audit failed") else ""
        console.print(f"[yellow]skipped {escape(task_id)}[/yellow]: {escape(why + hint)}", highlight=False, soft_wrap=True)


def _run_episodes(console: Console, run: _Prepared, db: str | None, live: bool) -> list[EpisodeInfo]:
    """The run's pending episodes through its executor, shown live or as lines; Ctrl-C marks it interrupted, says
    how to resume it, and exits 130."""
    store, rid, config, selected = run.store, run.rid, run.config, run.selected
    if run.resumed:
        store.reopen_run(rid)  # a resumed run that was interrupted is running again
    pending = store.pending_tasks(rid, [t.id for t in selected], final_failures(config))
    view = RunView(rid, config.model, config.agent.device, len(selected), already_done=len(selected) - len(pending))
    display = Live(view, console=console, refresh_per_second=4) if live else contextlib.nullcontext()
    lines = DoneLines(console, len(selected), done=len(selected) - len(pending),
                      enabled=not (live and console.is_terminal))
    if lines.enabled:  # no live view: say at once what is running, before the first episode ends
        console.print(f"run {rid}: {len(pending)} episode(s) to run of {len(selected)}, {config.concurrency} at a time "
                      f"on {config.agent.device}; a line as each ends", highlight=False, soft_wrap=True)

    def done(info: EpisodeInfo) -> None:
        view.on_done(info)
        _say_done(console, lines, info)

    resume_line = f"`kernelmosaic generate --resume {rid}{db_option(db)}` continues it"
    try:
        with run.runner, display:
            work = run.runner.run_episodes(selected, solver=AGENT, store=store, store_url=portable_url(db),
                                           make_backend=run.make_backend, run_id=rid, config=config,
                                           verify=config.verify_config(), on_step=view.on_step, on_done=done)
            infos = asyncio.run(run_interruptibly(
                work, on_interrupt=lambda: _stopping(rid, display if live else None),
                on_force=lambda: print(f"\nforced exit; {resume_line}", file=sys.stderr, flush=True)))
    except Interrupted:
        store.finish_run(rid, "interrupted")  # `runs` says so; --resume sets it running again
        Console(stderr=True).print(f"[yellow]interrupted[/yellow]: run {rid} stopped; every finished step is stored; "
                                   f"{resume_line}.", highlight=False, soft_wrap=True)  # the command whole, piped too
        raise typer.Exit(130) from None
    if live:
        console.line()
    return infos


def _executor(scale, config: GenerateConfig, db: str | None):
    """Where the run's episodes go (`--executor`, `[scale]`); a store the executor's processes cannot share is
    refused here, before the run is created (`StoreNotShared`, a ValueError)."""
    from kernelmosaic.runs.executor import open_executor

    return open_executor(scale, device=config.agent.device, model=config.model, concurrency=config.concurrency,
                         store_url=portable_url(db))


def _stopping(rid: int, display: Live | None) -> None:
    """First Ctrl-C: freeze the live view, say what happens, stop the verifier's workers."""
    if display is not None:
        display.stop()
    print(f"\nstopping run {rid} (Ctrl-C again forces the exit)...", file=sys.stderr, flush=True)
    request_stop()  # no worker starts after this; those running are killed


def _finish(console: Console, store: Store, rid: int, selected: list[Task], infos: list[EpisodeInfo],
            config: GenerateConfig, db: str | None) -> int:
    """Close the run, print its summary, and say how it ended: 0 when episodes ran, 1 when none could."""
    unusable = [i for i in infos if i.exit_reason == MODEL_UNUSABLE]
    ran = [i for i in infos if i.status == "done"]
    left = store.pending_tasks(rid, [t.id for t in selected], final_failures(config))
    failed = bool(unusable) or (infos and not ran)
    if failed:
        store.finish_run(rid, "failed")
    elif not left:
        store.finish_run(rid, "done")
    summary = store.run_summary(rid)
    speed = speedup_summary(summary)
    flagged = f", {len(summary.flagged_tasks)} flagged task(s) not counted" if summary.flagged_tasks else ""
    console.print(f"run {rid}: {summary.done} done, {summary.failed} failed, solved {summary.solved} "
                  f"(pass rate {summary.pass_rate:.0%}){flagged}, {speed}; "
                  f"trajectories in {config.out_dir / f'run-{rid}' / 'trajectories'}", highlight=False)
    if unusable:
        fail(f"the model is unusable, run {rid} stopped and is marked failed: {unusable[0].exit_detail}. Fix it, then "
             f"`kernelmosaic generate --resume {rid}{db_option(db)}`.", 1)
        return 1
    if failed:
        fail(f"every episode of run {rid} failed; it is marked failed.", 1)
        return 1
    return 0
