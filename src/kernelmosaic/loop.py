"""`kernelmosaic loop`: the whole pipeline once, each stage as its own command, on embedded defaults.

curate (near-duplicates among the tasks) -> generate (episodes, every candidate verified) -> sft export (verified
episodes as training data) -> sft train (a base model fine-tuned on them: `--base PATH`, or a tiny random-weight one
that shows the step and learns nothing useful) -> evaluate (the base and the checkpoint, one-shot) -> report (the
generation run, and the two evaluations compared). Each stage runs as a child `kernelmosaic` process, exactly what a
user would type, so the loop shows nothing the stage commands cannot do on their own.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import typer
from rich.markup import escape

from kernelmosaic.commands import Console, Device, fail

__all__ = ["loop_command"]


def _stage(console: Console, title: str, args: list[str], ok: tuple[int, ...] = (0,)) -> int:
    """Run one stage as its own command. The stage has a process group of its own and every SIGINT or SIGTERM the
    loop gets is passed on to it once (a Ctrl-C at the terminal reaches the loop's group; a `kill` reaches the loop
    alone): the stage stops as that command stops (within seconds, its workers with it), then the loop does."""
    console.rule(f"[bold]{title}[/bold]")
    # the command on a line of its own, wrapped at spaces only (in the rule's title it was cut with "…" at 80 columns)
    console.print(f"$ kernelmosaic {escape(' '.join(args))}", highlight=False, soft_wrap=True)
    child = subprocess.Popen([sys.executable, "-m", "kernelmosaic.cli", *args], process_group=0)
    signals: list[int] = []

    def forward(signum: int, _frame: object) -> None:
        signals.append(signum)
        with contextlib.suppress(ProcessLookupError):
            os.kill(child.pid, signum)

    previous = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        code = child.wait()
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    if signals or code in (130, -signal.SIGINT, -signal.SIGTERM):
        Console(stderr=True).print(f"[yellow]interrupted[/yellow] during {title} (`kernelmosaic {args[0]}`): the stages "
                                   "before it are done and stored; `kernelmosaic loop` with the same options runs the "
                                   "loop again from the start (the resume line above, if the stage printed one, "
                                   "finishes that stage alone).", highlight=False, soft_wrap=True)
        raise typer.Exit(130)
    if code not in ok:
        raise fail(f"`kernelmosaic {args[0]}` exited {code}; the loop stops here.", code)
    return code


def loop_command(
    out: Path = typer.Option(Path("runs/loop"), "--out", help="Folder for the training data, model and reports."),
    tasks: str = typer.Option("builtin", "--tasks", help="Task source (builtin, a folder, kernelbench:PATH, ...)."),
    model: str = typer.Option("replay:bundled", "--model", help="Model spec (default: the bundled hand-written "
                              "demonstrations, replayed and verified again)."),
    device: Device = None,
    db: str | None = typer.Option(None, "--db", envvar="KERNELMOSAIC_DB", help="Store (default ./kernelmosaic.db)."),
    base: Path | None = typer.Option(None, "--base", help="Base model folder to fine-tune (Hugging Face format; default: "
                                     "a tiny random-weight model built here, which shows the step and learns nothing)."),
    train_steps: int = typer.Option(10, "--train-steps", min=1, help="Optimizer steps of the fine-tuning."),
    eval_limit: int = typer.Option(3, "--eval-limit", min=1, help="Tasks the base and the checkpoint are evaluated on."),
) -> None:
    """Run the whole loop once: curate -> generate -> sft export -> sft train -> evaluate -> report (minutes on a CPU)."""
    from kernelmosaic.store import open_store

    console = Console()
    store_args = ["--db", db] if db else []
    device_args = ["--device", device] if device else []
    found = _stage(console, "1/6 curate", ["curate", "duplicates", tasks], ok=(0, 1))
    if found == 1:
        console.print("near-duplicate clusters above are reported, not removed: `kernelmosaic curate select` picks a "
                      "diverse subset", highlight=False)
    _stage(console, "2/6 generate", ["generate", "--tasks", tasks, "--model", model, "--no-live", *store_args, *device_args])

    def latest() -> tuple[int, str]:
        with open_store(db, create=False) as store:
            run = store.latest_run()
            assert run is not None  # the stage before just created it
            return run.id, store.url

    run_id, url = latest()
    data = out / "sft"
    _stage(console, "3/6 sft export", ["sft", "export", "--run", str(run_id), "--out", str(data), *store_args])
    if base is None:
        base = out / "tiny-base"
        _stage(console, "4/6 sft train: a tiny random-weight base model", ["sft", "tiny-base", "--data", str(data / "full"),
                                                                         "--out", str(base)])
    trained = out / "train"
    train = {"model": base, "dataset": data / "full", "output_dir": trained, "max_steps": train_steps,
             "lora.enabled": "false", "learning_rate": "1e-3", "grad_accum": 1, "logging_steps": 1,
             "save_steps": train_steps, "gradient_checkpointing": "false"}
    _stage(console, "4/6 sft train", ["sft", "train", *[x for k, v in train.items() for x in ("--set", f"sft.train.{k}={v}")]])
    evaluated = []
    for name, path in (("base", base), ("checkpoint", trained / "final")):
        _stage(console, f"5/6 evaluate the {name}", ["evaluate", "--model", f"hf:{path}", "--tasks", tasks, "--limit",
                                                  str(eval_limit), "--set", "model.max_new_tokens=64", "--out",
                                                  str(out / "evaluate"), *store_args, *device_args])
        evaluated.append(latest()[0])
    _stage(console, "6/6 report", ["report", str(run_id), "--out", str(out / "report"), *store_args])
    _stage(console, "6/6 report: base against checkpoint", ["report", str(evaluated[0]), "--compare", str(evaluated[1]),
                                                            "--out", str(out / "eval-report"), *store_args])
    console.rule("[bold]done[/bold]")
    console.print(f"run {run_id}: trajectories and verdicts in the store ({url}); training data in {data} "
                  f"(README.md is its card); checkpoint in {trained / 'final'}; report in {out / 'report' / 'report.html'}; "
                  f"evaluation runs {evaluated[0]} (base) and {evaluated[1]} (checkpoint) compared in "
                  f"{out / 'eval-report' / 'report.html'}", highlight=False)
