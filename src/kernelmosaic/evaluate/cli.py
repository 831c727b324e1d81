"""`kernelmosaic evaluate`: a model (one-shot or agent) or a folder of generations over a task set, into the store."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import typer
from pydantic import ValidationError
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from kernelmosaic.commands import Console, Device, fail
from kernelmosaic.config import describe_error
from kernelmosaic.evaluate.config import EvalConfig
from kernelmosaic.evaluate.gates import MODEL_FAILED, NO_CANDIDATE, NOT_JUDGED
from kernelmosaic.evaluate.records import episode_record
from kernelmosaic.evaluate.runner import RUN_NAME, record_baselines, run_generations, run_model
from kernelmosaic.evaluate.samples import sample_id
from kernelmosaic.evaluate.summary import summarize_run
from kernelmosaic.runs.config import owned_setting
from kernelmosaic.runs.selection import select_tasks
from kernelmosaic.runs.task_meta import TaskMeta, task_meta
from kernelmosaic.store import Store
from kernelmosaic.store.backends import db_option, new_sqlite_file, remove_sqlite_file
from kernelmosaic.store.records import EpisodeInfo
from kernelmosaic.verify.config import VerifyConfig
from kernelmosaic.verify.progress import DoneLines, speed_detail, time_line
from kernelmosaic.verify.ray.cluster import portable_url
from kernelmosaic.verify.ray.options import RayAddress
from kernelmosaic.verify.stopping import Stopped, stop_on_signal

if TYPE_CHECKING:
    from kernelmosaic.evaluate.generations import Generation
    from kernelmosaic.models.base import ModelBackend
    from kernelmosaic.runs.executor import Executor
    from kernelmosaic.tasks.schema import Task
__all__ = ["evaluate_command", "fail"]




def _levels(text: str) -> list[int]:
    try:
        levels = sorted({int(x) for x in text.split(",") if x.strip()})
    except ValueError:
        raise fail(f"--levels {text!r}: expected comma-separated integers such as 1,2,3") from None
    if any(level not in (1, 2, 3, 4) for level in levels):
        raise fail(f"--levels {text!r}: levels are 1 to 4")
    return levels


def _config(resume: int | None, store, given: dict, where: str) -> tuple[int | None, EvalConfig]:
    """`where`: the settings file the `[verify]` overrides came from (or `--set / options`), for the error."""
    if resume is None:
        config = EvalConfig(**{k: v for k, v in given.items() if v is not None})
        try:
            config.verify_config()  # a bad [verify] value fails now, naming the key, before any task is read
        except ValidationError as exc:  # a ValueError: the caller's handler says it and exits 2
            raise ValueError(describe_error(exc, VerifyConfig, "verify", where)) from None
        return None, config
    run = store.get_run(resume)
    if run.name != RUN_NAME:
        raise ValueError(f"--resume {resume}: run {resume} is a {run.name!r} run, not an evaluation")
    store.reopen_run(resume)  # a run left interrupted is running again
    return resume, EvalConfig.model_validate(run.config)


def _say_done(lines: DoneLines, store: Store, info: EpisodeInfo, meta: dict[str, TaskMeta]) -> None:
    """The episode's line: its answer's latest verdict (status, and the speedup or why not), else how it ended."""
    if not lines.enabled:  # a terminal shows the bar; the read below is for the line only
        return
    record = episode_record(store, info, meta)
    verdict = record.answer_verdict()
    if info.status == "failed" or verdict is None:
        status, detail = info.exit_reason or info.status, info.exit_detail
    elif verdict.accepted:
        timed = record.answer_timing()
        status = verdict.status.value
        detail = speed_detail(timed.timing if timed else None)
        if info.task_flags:
            detail += f"; task flagged: {', '.join(info.task_flags)}"
    else:
        status, detail = verdict.status.value, verdict.message
    lines.say(info.task_id, status, info.totals.wall_seconds, detail, time_line(verdict.phase_seconds) if verdict else "")


def _executor(executor: str | None, address: str | None, config: EvalConfig, db: str | None, settings: dict):
    """Where the episodes and judgements go (`--executor`, or `[scale]` of the settings file and --set), the store
    checked for it."""
    from kernelmosaic.runs.executor import open_executor
    from kernelmosaic.verify.ray.config import scale_settings

    return open_executor(scale_settings(settings, executor, address), device=config.device, model=config.model,
                         concurrency=config.concurrency, store_url=portable_url(db))


def evaluate_command(
    model: str | None = typer.Option(None, "--model", help="Model spec: openai:NAME, hf:PATH, replay:FILE, scripted:NAME."),
    tasks: str | None = typer.Option(None, "--tasks", help="Task source: builtin, a folder, a .parquet, kernelbench:PATH "
                                     "(default builtin; with --generations, none: each problem file is its own task)."),
    generations: Path | None = typer.Option(None, "--generations", help="Judge existing candidates instead of a model: "
                                            "a KernelBench runs folder (level_X/problem_Y/sample_Z), a folder of "
                                            "<name>/problem.py + candidate*.py, or a JSONL manifest."),
    levels: str = typer.Option("", "--levels", help="Only these levels, e.g. 1,2."),
    mode: str = typer.Option("one-shot", "--mode", help="one-shot (one write, then judged) or agent (the full loop)."),
    samples: int = typer.Option(1, "--samples", min=1, help="Episodes per task (pass@k)."),
    max_turns: int = typer.Option(30, "--max-turns", min=1, help="Agent mode: model queries per episode."),
    policy: Literal["kernelbench", "strict"] | None = typer.Option(None, "--policy", help="kernelbench or strict "
                                                                   "(docs/threat-model.md; default: [verify] policy, "
                                                                   "else kernelbench)."),
    device: Device = None,
    seeds: int = typer.Option(1, "--seeds", min=1, help="Generations: judge each candidate under this many seeds."),
    alternatives: bool = typer.Option(True, "--alternatives/--no-alternatives", help="Also judge timed verdicts on "
                                      "a derived alternative shape set."),
    compile_baseline: bool | None = typer.Option(None, "--compile-baseline/--no-compile-baseline",
                                                 help="Time torch.compile baselines (default: [verify] compile_baseline, else on cuda only)."),
    task: list[str] = typer.Option([], "--task", help="Only this task id (repeatable)."),
    limit: int = typer.Option(0, "--limit", min=0, help="At most this many tasks (0: all)."),
    concurrency: int = typer.Option(4, "--concurrency", min=1, help="Episodes or candidates at once."),
    out: Path = typer.Option(Path("runs"), "--out", help="Folder for run files (problems, candidates, trajectories)."),
    db: str | None = typer.Option(None, "--db", envvar="KERNELMOSAIC_DB", help="Store URL (default ./kernelmosaic.db)."),
    resume: int | None = typer.Option(None, "--resume", help="Continue this evaluation run with its stored settings."),
    config_file: Path | None = typer.Option(None, "--config", help="Settings file (TOML; default ./kernelmosaic.toml when "
                                            "present): [model] (the backend's options), [verify], [scale]."),
    sets: list[str] = typer.Option([], "--set", help="Override one setting of [model], [verify] or [scale]: "
                                   "SECTION.KEY=VALUE, e.g. model.max_new_tokens=256, verify.judges_per_gpu=4 "
                                   "(repeatable)."),
    executor: str | None = typer.Option(None, "--executor", help="local (default) or ray: agent episodes on a Ray "
                                        "cluster's episode actors, every candidate judged on its per-GPU judges "
                                        "(the [ray] extra; docs/scale.md). Default: [scale] executor."),
    ray_address: RayAddress = None,
) -> None:
    """Evaluate a model or judge existing generations; every verdict goes to the store; prints the run id."""
    from kernelmosaic.config import ConfigError, read_config

    if mode not in ("one-shot", "agent"):
        raise fail(f"--mode must be one-shot or agent, not {mode!r}")
    if policy not in (None, "kernelbench", "strict"):
        raise fail(f"--policy must be kernelbench or strict, not {policy!r}")
    if resume is None and (generations is None) == (model is None):
        raise fail("give exactly one of --model SPEC (evaluate a model) or --generations DIR_OR_MANIFEST")
    if resume is not None and (config_file is not None or sets):
        raise fail("--resume continues a run with its stored settings; --config and --set are not taken")
    try:
        settings = read_config(config_file, sets, reads=("model", "verify", "scale"))
        options = settings.get("model", {}) if resume is None else {}
        overrides = settings.get("verify", {}) if resume is None else {}
    except ConfigError as exc:
        raise fail(str(exc)) from None
    from kernelmosaic.verify.settings import run_device, verify_settings

    device = run_device(device, overrides)
    try:  # cuda on a machine without a GPU is refused now, in one sentence, not once per episode
        verify_settings({}, {"device": device})
    except ValueError as exc:
        raise fail(str(exc)) from None
    given = dict(mode="generations" if generations is not None else mode, model=model or "", model_options=options,
                 tasks=tasks if tasks is not None else ("" if generations is not None else "builtin"),
                 generations=str(generations or ""), levels=_levels(levels), task_ids=task, limit=limit,
                 samples=samples, max_turns=max_turns, policy=owned_setting(policy, overrides, "policy", "kernelbench"),
                 device=device, seeds=seeds, alternatives=alternatives,
                 compile_baseline=owned_setting(compile_baseline, overrides, "compile_baseline", device == "cuda"),
                 concurrency=concurrency, out_dir=out, verify=overrides)
    console = Console()
    store, run_id, config, selected, found, runner, make_backend = _prepare(db, resume, given, settings, executor,
                                                                            ray_address)
    ids, unrun = _evaluate(console, store, run_id, config, selected, found, runner, make_backend, db)
    _conclude(console, store, run_id, ids, unrun, db)


def _prepare(db: str | None, resume: int | None, given: dict, settings: dict, executor: str | None,
             ray_address: str | None) -> tuple[Store, int, EvalConfig, list[Task], list[Generation], Executor,
                                               Callable[[], ModelBackend] | None]:
    """The run's store, id and settings, its tasks (and generations), executor and model, checked before the run is
    created; exit 2 naming the problem."""
    from kernelmosaic.agent.runner import replayable
    from kernelmosaic.evaluate.generations import discover_generations
    from kernelmosaic.models import ModelError
    from kernelmosaic.store import StoreError, open_store
    from kernelmosaic.tasks import TaskFormatError, load_tasks
    from kernelmosaic.verify.verifier import InputError

    found: list[Generation] = []
    created = new_sqlite_file(db)  # removed again if this command fails before its run exists
    store = None
    try:
        store = open_store(db)
        run_id, config = _config(resume, store, given, settings.get("__file__", "--set / options"))
        loaded = load_tasks(config.tasks) if config.tasks else []
        if config.mode == "generations":
            found = discover_generations(Path(config.generations), loaded)
            unknown = {g.task.id for g in found if g.problem is not None}
            chosen = {t.id for t in select_tasks(list({g.task.id: g.task for g in found}.values()), config.task_ids,
                                                 config.limit, config.levels)}
            found = [g for g in found if g.task.id in chosen]
            selected = list({g.task.id: g.task for g in found}.values())
        else:
            if not config.task_ids and config.model and len(recorded := replayable(loaded, config.model)) < len(loaded):
                Console(stderr=True).print(f"{config.model} holds recordings of {len(recorded)} of {len(loaded)} tasks; "
                                  "evaluating those (name others with --task to count them as failed samples)",
                                  markup=False, soft_wrap=True)
                loaded = recorded
            selected, unknown = select_tasks(loaded, config.task_ids, config.limit, config.levels), set()
        if not selected:
            raise ValueError("no task to evaluate after --levels/--task/--limit")
        runner = _executor(executor, ray_address, config, db, settings)
        try:
            make_backend = runner.model_factory(config.model, config.model_options) if config.model else None
            if run_id is None:
                config = config.model_copy(update={"task_meta": task_meta(selected, sorted(unknown))})
                run_id = store.create_run(RUN_NAME, config.model or f"generations:{config.generations}", config.tasks,
                                          config)
        except BaseException:
            runner.close()
            raise
    except (StoreError, TaskFormatError, ModelError, InputError, ValueError, RuntimeError) as exc:
        if created is not None and store is not None:
            store.close()
            remove_sqlite_file(created)  # a store with no run in it: nothing to keep
        raise fail(str(exc)) from exc
    return store, run_id, config, selected, found, runner, make_backend


def _evaluate(console: Console, store: Store, run_id: int, config: EvalConfig, selected: list[Task],
              found: list[Generation], runner: Executor, make_backend: Callable[[], ModelBackend] | None,
              db: str | None) -> tuple[list[str], list[EpisodeInfo]]:
    """Every pending sample judged through the executor, with a progress bar and a line per episode; Ctrl-C marks
    the run interrupted, says how to resume it, and exits 130. Returns the run's sample ids and the episodes that
    ended without a verdict."""
    console.print(f"evaluation run {run_id}: {config.mode}, {len(selected)} task(s) x {config.samples if config.mode != 'generations' else 'their'} "
                  f"sample(s), policy {config.policy}, device {config.device}", highlight=False, soft_wrap=True)
    total = len(found) if config.mode == "generations" else len(selected) * config.samples
    counts = {"done": 0, "solved": 0}
    unrun: list[EpisodeInfo] = []  # episodes that ended without a verdict (the model or the verifier could not run)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console) as progress:
        bar = progress.add_task("evaluating", total=total)
        ids = [sample_id(g.task.id, g.sample) for g in found] if config.mode == "generations" else \
            [sample_id(t.id, k) for k in range(config.samples) for t in selected]
        already = total - len(store.pending_tasks(run_id, ids, ("infra_error",)))
        progress.update(bar, completed=already)
        lines = DoneLines(console, total, done=already)

        def on_done(info: EpisodeInfo) -> None:
            counts["done"] += 1
            counts["solved"] += info.solved
            if info.status == "failed":
                unrun.append(info)
            progress.update(bar, advance=1, description=f"evaluating ({counts['solved']} of {counts['done']} solved)")
            _say_done(lines, store, info, config.task_meta)

        try:
            with stop_on_signal(), runner:
                if config.mode == "generations":
                    run_generations(found, store=store, run_id=run_id, config=config, on_done=on_done, executor=runner)
                else:
                    run_model(selected, store=store, run_id=run_id, config=config, make_backend=make_backend,
                              on_done=on_done, executor=runner, store_url=portable_url(db))
        except (KeyboardInterrupt, Stopped):
            progress.stop()
            store.finish_run(run_id, "interrupted")  # `runs` says so; --resume sets it running again
            Console(stderr=True).print(f"interrupted: run {run_id} stopped; every finished episode is stored; resume: "
                                       f"kernelmosaic evaluate --resume {run_id}{db_option(db)}", highlight=False, soft_wrap=True)
            raise typer.Exit(130) from None
    return ids, unrun


def _conclude(console: Console, store: Store, run_id: int, ids: list[str], unrun: list[EpisodeInfo],
              db: str | None) -> None:
    """Finish the run (done when nothing is pending), record its baselines, print its one-line summary; a run where
    nothing was judged is `failed` and exits 1."""
    left = store.pending_tasks(run_id, ids, ("infra_error",))
    if not left:
        store.finish_run(run_id, "done")
    record_baselines(store, run_id)
    summary = summarize_run(store, run_id)
    overall = summary.overall
    pending = f"{len(left)} pending (resume: kernelmosaic evaluate --resume {run_id}{db_option(db)})" if left else "none pending"
    reviewed_out = sum(f.why.startswith("review: ") for f in summary.flagged)
    review = f"{reviewed_out} episode(s) reported apart by the review's decisions; " if reviewed_out else ""
    console.print(f"run {run_id}: correct {overall.correct.value:.0%} of {overall.episodes} episode(s), "
                  f"compile/interface {overall.gate1_compile.value:.0%}; "
                  f"{review}{pending}; report: kernelmosaic report {run_id}{db_option(db)} --out DIR",
                  highlight=False, soft_wrap=True)  # one line each in a log, for grep
    if summary.tasks and all(r.status == NO_CANDIDATE for r in summary.tasks):
        console.print(f"note: no episode of run {run_id} wrote a candidate; the model was measured and scored 0.",
                      highlight=False, soft_wrap=True)
    unjudged = [r for r in summary.tasks if r.status in (NOT_JUDGED, MODEL_FAILED)]
    if unjudged and len(unjudged) == len(summary.tasks):  # the model never answered, or nothing was judged (docs/cli.md)
        first = unrun[0] if unrun else None
        why = (f" (first: {first.exit_reason}: {first.exit_detail})" if first else
               f" (first: {unjudged[0].status}{': ' + unjudged[0].model_failure if unjudged[0].model_failure else ''})"
               if unjudged else "")
        store.finish_run(run_id, "failed")  # `runs` says so; --resume sets it running again
        raise fail(f"nothing was judged in run {run_id}: no episode's answer received a verdict{why}; fix the cause, "
                   f"then `kernelmosaic evaluate --resume {run_id}{db_option(db)}`.", 1)


