"""`kernelmosaic verify` and `kernelmosaic verify-batch`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from kernelmosaic.verify.batch import discover_pairs, run_batch
from kernelmosaic.verify.config import VerifyConfig
from kernelmosaic.verify.verdict import Verdict
from kernelmosaic.verify.verifier import InputError, Verifier

__all__ = ["verify_command", "verify_batch_command"]

Device = Annotated[str, typer.Option("--device", help="cuda or cpu (cpu judges C++ load_inline candidates).")]
Precision = Annotated[str, typer.Option("--precision", help="fp32, fp16 or bf16: the precision the task asks for.")]
Trials = Annotated[int, typer.Option("--trials", help="Correctness trials, each with fresh inputs.")]


def _config(device: str, precision: str, trials: int, **extra) -> VerifyConfig:
    try:
        return VerifyConfig(device=device, precision=precision, trials=trials, **extra)
    except ValueError as exc:
        raise typer.BadParameter(str(exc).splitlines()[-1]) from exc


def _summary(verdict: Verdict, explain: bool, console: Console) -> None:
    color = "green" if verdict.accepted else "red"
    console.print(f"[bold {color}]{verdict.status.value}[/]  {verdict.message}")
    c = verdict.correctness
    if c.trials:
        console.print(f"correctness: {c.passed}/{c.trials} trials ({', '.join(c.distributions)}), "
                      f"max abs {c.max_abs_error:.3g}, max rel {c.max_rel_error:.3g} (atol {c.atol:g}, rtol {c.rtol:g})")
    if verdict.timing:
        t = verdict.timing
        line = (f"timing ({t.timer}): candidate {t.candidate.median_ms:.4f} ms [{t.candidate.q1_ms:.4f}-{t.candidate.q3_ms:.4f}, "
                f"n={t.candidate.samples}], eager {t.eager.median_ms:.4f} ms -> {t.speedup_vs_eager:.2f}x")
        if t.compile and t.speedup_vs_compile is not None:
            line += f", torch.compile {t.compile.median_ms:.4f} ms -> {t.speedup_vs_compile:.2f}x"
        console.print(line)
    console.print(f"compile: {verdict.compile.seconds:.1f}s{' (cache hit)' if verdict.compile.cache_hit else ''}; "
                  f"env: {verdict.env.device_name} torch {verdict.env.torch}")
    if verdict.findings and (explain or not verdict.accepted):
        from kernelmosaic.verify.runtime_rules import RUNTIME_RULES
        from kernelmosaic.verify.static import RULES

        table = Table("rule", "severity", "message", "rationale", "evidence", show_lines=explain)
        for f in verdict.findings:
            rationale = RULES[f.rule].rationale if f.rule in RULES else RUNTIME_RULES.get(f.rule, "")
            table.add_row(f.rule, f.severity, f.message, rationale if explain else "", f.evidence[:200])
        console.print(table)
    if not verdict.accepted and verdict.status.value == "compile_error":
        console.print(verdict.compile.log[-3000:], markup=False, highlight=False)


def verify_command(
    problem: Annotated[Path, typer.Argument(help="KernelBench-format problem: Model, get_inputs, get_init_inputs.")],
    candidate: Annotated[Path, typer.Argument(help="Candidate module defining ModelNew.")],
    device: Device = "cuda",
    precision: Precision = "fp32",
    trials: Trials = 5,
    json_out: Annotated[bool, typer.Option("--json", help="Print the verdict as one JSON object.")] = False,
    explain: Annotated[bool, typer.Option("--explain", help="Show every finding with its rationale and evidence.")] = False,
    timing: Annotated[bool, typer.Option("--timing/--no-timing", help="Time against eager and torch.compile.")] = True,
    sanitize: Annotated[bool, typer.Option("--sanitize", help="Run compute-sanitizer on accepted CUDA kernels.")] = False,
) -> None:
    """Judge one candidate against one problem. Exit 0 accepted, 1 rejected, 2 unusable input."""
    console = Console()
    config = _config(device, precision, trials, timing=timing, sanitize=sanitize)
    for path, what in ((problem, "problem"), (candidate, "candidate")):
        if not path.is_file():
            console.print(f"[red]{what} {path}: no such file[/]")
            raise typer.Exit(2)
    try:
        with Verifier(config) as verifier:
            verdict = verifier.verify(problem, candidate)
    except InputError as exc:
        console.print(f"[red]{exc}[/]")
        raise typer.Exit(2) from exc
    if json_out:
        typer.echo(verdict.to_json())
    else:
        _summary(verdict, explain, console)
    raise typer.Exit(0 if verdict.accepted else 1)


def verify_batch_command(
    source: Annotated[Path, typer.Argument(help="A manifest (.jsonl) or a folder of <pair>/problem.py + candidate*.py.")],
    out: Annotated[Path, typer.Option("--out", help="JSONL of verdicts; pairs already in it are skipped.")] = Path("verdicts.jsonl"),
    device: Device = "cuda",
    precision: Precision = "fp32",
    trials: Trials = 5,
    timing: Annotated[bool, typer.Option("--timing/--no-timing")] = True,
) -> None:
    """Judge many pairs on all visible GPUs (or the CPU), resumably."""
    console = Console(stderr=True)
    config = _config(device, precision, trials, timing=timing)
    try:
        pairs = discover_pairs(source)
    except InputError as exc:
        console.print(f"[red]{exc}[/]")
        raise typer.Exit(2) from exc
    counts = {"accepted": 0, "rejected": 0, "skipped": 0}
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console) as progress:
        task = progress.add_task("verifying", total=len(pairs))

        def on_result(pair, row) -> None:
            key = "skipped" if row is None else ("accepted" if row["verdict"]["accepted"] else "rejected")
            counts[key] += 1
            progress.update(task, advance=1, description=f"verifying ({counts['accepted']} accepted, "
                                                          f"{counts['rejected']} rejected, {counts['skipped']} skipped)")

        for _ in run_batch(pairs, config, out, on_result=on_result):
            pass
    console.print(f"{counts['accepted']} accepted, {counts['rejected']} rejected, {counts['skipped']} already judged -> {out}")
