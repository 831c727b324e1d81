"""`kernelmosaic verify` and `kernelmosaic verify-batch` (`verify-serve` is verify/serve_cli.py).

The verifier itself (torch, workers) is imported inside the commands, only when they judge in this process: a
`verify` that a running service answers stays a light client.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from kernelmosaic import pysource
from kernelmosaic.commands import Console, Device, fail
from kernelmosaic.config import DEFAULT_FILE, WORKDIR, ConfigError, read_config
from kernelmosaic.contracts.speedup import MAX_SPREAD, WALL_AGREEMENT, timing_speedups
from kernelmosaic.contracts.verdict import Status, Verdict
from kernelmosaic.verify.config import VerifyConfig
from kernelmosaic.verify.pool import DeviceCrowded, WorkerDied, WorkerError, WorkerStartFailed
from kernelmosaic.verify.problem_shapes import Shapes, problem_at_shapes
from kernelmosaic.verify.progress import DoneLines, speed_detail, time_line
from kernelmosaic.verify.ray.options import RayAddress
from kernelmosaic.verify.requests import Alternative, InputError
from kernelmosaic.verify.settings import DeviceUnavailable, default_device, verify_settings
from kernelmosaic.verify.stopping import Stopped, stop_on_signal, stop_requested

__all__ = ["verify_command", "verify_batch_command", "fail", "cli_settings"]


# The options' choices are VerifyConfig's own Literal types, so an error lists exactly the values it allows.
_PrecisionName = VerifyConfig.model_fields["precision"].annotation
_PolicyName = VerifyConfig.model_fields["policy"].annotation

Precision = Annotated[_PrecisionName | None, typer.Option("--precision", help="The precision the task asks for "
                                                          "(default fp32).")]
Trials = Annotated[int | None, typer.Option("--trials", min=1, help="Correctness trials, each with fresh inputs "
                                            "(default 5).")]
PolicyOpt = Annotated[_PolicyName | None, typer.Option("--policy", help="strict (every operation in custom kernels) or kernelbench "
                                                    "(PyTorch may compute the rest; a custom kernel's output "
                                                    "must reach the result). Default strict.")]
ConfigFile = Annotated[Path | None, typer.Option("--config", help=f"Settings file (TOML; default ./{DEFAULT_FILE} when "
                                                 "present): its [verify] section sets any VerifyConfig field. See "
                                                 "docs/configuration.md.")]
ExecutorOpt = Annotated[str | None, typer.Option("--executor", help="local (this machine; default) or ray (a Ray "
                                                 "cluster: compiles on CPU tasks, one judge actor per GPU; the [ray] "
                                                 "extra). Default: [scale] executor. See docs/scale.md.")]
Sets = Annotated[list[str], typer.Option("--set", help="Override one setting: verify.KEY=VALUE, e.g. verify.trials=3, "
                                         "verify.timing_rounds=2, or scale.KEY=VALUE (repeatable). Explicit flags win.")]
_READS = ("verify", "scale")
"""The settings sections these commands read; a --set of another is refused (config.read_config)."""


def _could_not_run(exc: BaseException, device: str) -> str:
    """What the user reads when the verifier itself could not work (no verdict was made)."""
    if isinstance(exc, DeviceCrowded):
        return f"the device was too crowded to judge on ({device}): {exc}"
    if isinstance(exc, WorkerStartFailed):
        return (f"the verifier could not start a worker on {device}: {exc.detail}. Nothing was judged (no candidate "
                f"code had run); a host too loaded to start Python and torch in time, or a device that does not "
                f"initialise, does this: run again when the machine is less busy")
    return f"the verifier could not run on {device}: {exc}"




def _device_seen(config: VerifyConfig) -> str:
    """The device a running verifier service sees (no torch import here), else what torch in this process sees."""
    if config.use_service:
        from kernelmosaic.verify.service_client import service_device

        seen = service_device(config.cache_dir)
        if seen is not None:
            return seen
    return default_device()


def cli_settings(config_file: Path | None, sets: list[str], **flags) -> VerifyConfig:
    """Defaults, then the file's [verify] section, then --set, then the flags given; exit 2 naming a bad value."""
    try:
        return verify_settings(read_config(config_file, sets, reads=_READS), flags, probe=_device_seen)
    except (ConfigError, DeviceUnavailable) as exc:
        raise fail(str(exc)) from None


def _check_problem_parses(problem: Path) -> None:
    """A problem that is not Python is unusable input (exit 2), found before any worker starts."""
    try:
        pysource.parse(problem.read_text(encoding="utf-8"), filename=str(problem))
    except SyntaxError as exc:
        raise fail(f"problem {problem}:{exc.lineno or 0}: {exc.msg} (not valid Python)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise fail(f"problem {problem}: cannot be read ({exc})") from None


def _isolation(verdict: Verdict, explain: bool, console: Console) -> None:
    """The OS isolation layers the candidate's processes ran in; with --explain, what each stops and what of the
    documented minimum is missing (a verdict without it is never *verified*)."""
    from kernelmosaic.contracts.isolation import missing
    from kernelmosaic.verify.isolation import describe

    layers = verdict.env.isolation
    short = missing(layers)
    console.print(f"isolation: {', '.join(layers) or 'none recorded'}"
                  + (f" [yellow](below the minimum: {'; '.join(short)})[/]" if short else " (minimum met)"), highlight=False)
    if explain:
        for line in describe(layers):
            console.print(f"  {line}", highlight=False, soft_wrap=True)


def _summary(verdict: Verdict, explain: bool, console: Console) -> None:
    color = "green" if verdict.accepted else "red"
    console.print(f"[bold {color}]{verdict.status.value}[/]  {verdict.message}")
    console.print(f"policy: {verdict.policy}", highlight=False)  # shapes: said on stderr before the judgement
    if verdict.custom is not None:
        share = "unavailable" if verdict.custom.share is None else \
            f"{100 * verdict.custom.share:.1f}% of {verdict.custom.share_basis.replace('_', ' ')}"
        uses = ", ".join(f"{k.name} x{k.calls}" + {True: "", False: " (output unused)", None: ""}[k.reaches_output]
                         for k in verdict.custom.kernels)
        console.print(f"custom kernels: {uses or 'none observed'}; share {share}", highlight=False)
    if verdict.robustness is not None:
        if verdict.robustness.note:
            console.print(f"alternatives: {verdict.robustness.note}", highlight=False, soft_wrap=True)
        for a in verdict.robustness.alternatives:
            console.print(f"alternative {a.label}: {'pass' if a.passed else a.status.value}, "
                          f"max abs {a.max_abs_error:.3g} {a.detail}", highlight=False)
    c = verdict.correctness
    if c.trials:
        console.print(f"correctness: {c.passed}/{c.trials} trials ({', '.join(c.distributions)}), "
                      f"max abs {c.max_abs_error:.3g}, max rel {c.max_rel_error:.3g} (atol {c.atol:g}, rtol {c.rtol:g})")
    if verdict.timing:
        t = verdict.timing
        readings = timing_speedups(t)
        eager, compiled = readings["eager_device"], readings["compile_device"]
        line = (f"timing ({t.timer}): candidate {t.candidate.median_ms:.4f} ms ({t.candidate.q1_ms:.4f}-"
                f"{t.candidate.q3_ms:.4f} between quartiles, n={t.candidate.samples}), eager {t.eager.median_ms:.4f} ms "
                f"-> {eager.describe()}")
        line += (f", torch.compile {t.compile.median_ms:.4f} ms -> {compiled.describe()}" if t.compile else
                 ", torch.compile not measured")
        console.print(line, highlight=False, markup=False, soft_wrap=True)
        if eager.wall is not None:
            console.print(f"[yellow]speedup unreliable[/]: the timed calls give {eager.value:.2f}x and the verifier's "
                          f"own clock {eager.wall:.2f}x on back-to-back calls, more than {WALL_AGREEMENT}x apart (a busy "
                          "host, caches warm back to back and flushed before each timed call, or a candidate that "
                          "shortens its own timed calls); metrics count it at its slow end", highlight=False)
        elif not (eager.reliable and (compiled.reliable or not compiled.measured)):
            console.print(f"[yellow]speedup unreliable[/]: the timings' own spread is wider than a factor "
                          f"{MAX_SPREAD} between quartiles (a busy host or a noisy clock); rerun on an idle machine "
                          "before quoting it", highlight=False)
    env = f"; env: {verdict.env.device} ({verdict.env.device_name}), torch {verdict.env.torch}" if verdict.env.device else ""
    console.print(f"compile: {verdict.compile.seconds:.1f}s{' (cache hit)' if verdict.compile.cache_hit else ''}{env}")
    _isolation(verdict, explain, console)
    if verdict.findings and (explain or not verdict.accepted):
        from kernelmosaic.contracts.task_rules import TASK_RULES
        from kernelmosaic.verify.runtime_rules import RUNTIME_RULES
        from kernelmosaic.verify.static import RULES

        rows = []
        for f in verdict.findings:
            rationale = RULES[f.rule].rationale if f.rule in RULES else TASK_RULES[f.rule].rationale \
                if f.rule in TASK_RULES else RUNTIME_RULES.get(f.rule, "")
            rows.append((f.rule, f.severity, f.message, rationale if explain else "", f.evidence[:200]))
        if console.width < 120:  # five columns of a few letters would split words: a block per finding instead
            for rule, severity, message, rationale, evidence in rows:
                console.print(f"[bold]{escape(rule)}[/] ({severity}): {escape(message)}", highlight=False)
                for label, text in (("why", rationale), ("evidence", evidence)):
                    if text:
                        console.print(f"  {label}: {escape(text)}", highlight=False)
        else:
            table = Table(show_lines=explain)
            for col in ("rule", "severity", "message", "rationale", "evidence"):  # rule ids never wrap
                table.add_column(col, overflow="fold", no_wrap=col in ("rule", "severity"))
            for row in rows:
                table.add_row(*row)
            console.print(table)
    if not verdict.accepted and verdict.status.value == "compile_error":
        console.print(verdict.compile.log[-3000:], markup=False, highlight=False)


def _alternatives(files: list[Path]) -> list[Alternative]:
    """`--alt` files; none given: the verifier derives the size check's alternative itself (`verify.derive_alt`)."""
    return [Alternative(label=str(f), problem=f) for f in files]


ShapesOpt = Annotated[Shapes | None, typer.Option("--shapes", help="auto (default): a task's small shapes on cpu "
                                                 "when the problem is a task's reference (its task folder's "
                                                 "reference.py, or a bundled task's reference), else the problem's "
                                                 "own sizes; small: the task's small shapes; full: the problem's own "
                                                 "sizes. The verdict's `shapes` says which ran.")]
DeriveAlt = Annotated[bool | None, typer.Option("--derive-alt/--no-derive-alt", help="Judge the candidate also at sizes "
                                                "derived from the problem's input-size constants when no --alt is "
                                                "given (default on; [verify] derive_alt). A kernel with the sizes "
                                                "baked in is shape-specialised.")]


def verify_command(
    problem: Annotated[Path, typer.Argument(help="KernelBench-format problem: Model, get_inputs, get_init_inputs.")],
    candidate: Annotated[Path, typer.Argument(help="Candidate module defining ModelNew.")],
    device: Device = None,
    precision: Precision = None,
    trials: Trials = None,
    shapes: ShapesOpt = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the verdict as one JSON object (errors go to stderr).")] = False,
    explain: Annotated[bool, typer.Option("--explain", help="Show every finding with its rationale and evidence.")] = False,
    timing: Annotated[bool | None, typer.Option("--timing/--no-timing", help="Time against eager and torch.compile "
                                                "(default on).")] = None,
    sanitize: Annotated[bool | None, typer.Option("--sanitize/--no-sanitize", help="Run compute-sanitizer on accepted "
                                                  "CUDA kernels (default off).")] = None,
    policy: PolicyOpt = None,
    alt: Annotated[list[Path], typer.Option("--alt", help="An alternative problem file (other sizes of the same "
                                                          "problem); repeatable. Judged after timing.")] = [],  # noqa: B006
    derive_alt: DeriveAlt = None,
    config_file: ConfigFile = None,
    sets: Sets = [],  # noqa: B006 - typer reads the default, never mutates it
) -> None:
    """Judge one candidate against one problem. Exit 0 accepted, 1 rejected, 2 unusable input (an option, a file,
    or a problem that does not load). The device is cuda when a GPU is visible, else cpu; the verdict's env says which.

    Example: kernelmosaic tasks show l1_relu --form reference > problem.py && kernelmosaic verify problem.py candidate.py
    """
    console, err = Console(), Console(stderr=True)
    for path, what in [(problem, "problem"), (candidate, "candidate")] + [(a, "--alt") for a in alt]:
        if not path.is_file():
            raise fail(f"{what} {path}: no such file")
    _check_problem_parses(problem)
    config = cli_settings(config_file, sets, device=device, precision=precision, trials=trials, timing=timing,
                       sanitize=sanitize, policy=policy, derive_alt=derive_alt, shapes=shapes)
    try:
        # said before the judgement (the verifier applies the same rule and records it in the verdict)
        err.print(f"shapes: {problem_at_shapes(problem, config).note}", highlight=False, soft_wrap=True)
        verdict = _judge_one(config, problem, candidate, _alternatives(alt), _seeded(config_file, sets), err)
    except InputError as exc:
        raise fail(str(exc)) from None
    except (KeyboardInterrupt, Stopped, WorkerDied, WorkerError, DeviceCrowded) as exc:
        if isinstance(exc, KeyboardInterrupt) or stop_requested():  # Ctrl-C: the worker died because we stopped
            err.print("interrupted: nothing was judged; run the same command again.", highlight=False)
            raise typer.Exit(130) from None
        raise fail(_could_not_run(exc, config.device)) from None
    if json_out:
        typer.echo(verdict.to_json())
    else:
        _summary(verdict, explain, console)
    if verdict.status == Status.bad_problem:  # the problem, not the candidate, is at fault: unusable input
        if "exceeded" not in verdict.message:
            raise fail(f"problem {problem} is unusable: {verdict.message}")
        raise fail(f"problem {problem} could not be judged within the verifier's limits: {verdict.message} "
                   f"({_limit_hint(problem, config)})")
    raise typer.Exit(0 if verdict.accepted else 1)


def _limit_hint(problem: Path, config: VerifyConfig) -> str:
    """What to do about a reference that outran a time or memory limit: on the CPU at a task's full sizes, its small
    shapes; always, the limit's setting."""
    raise_it = "raise the limit, e.g. --set verify.run_timeout_s=600"
    if config.device == "cpu" and config.shapes == "full":
        small = problem_at_shapes(problem, config.model_copy(update={"shapes": "auto"}))
        if small.path != problem:
            return (f"it ran at its own sizes on the CPU, which are sized for a GPU; --shapes auto (the default) judges "
                    f"it at its {small.note.split(' (verify.shapes')[0]}; or {raise_it}")
    return raise_it


def _executor(config_file: Path | None, sets: list[str], name: str | None, address: str | None, device: str):
    """`--executor` / `[scale]`: this machine's pool, or the Ray executor, joined and placed; exit 2 if it cannot."""
    from kernelmosaic.verify.ray.cluster import RayUnavailable
    from kernelmosaic.verify.ray.config import scale_settings
    from kernelmosaic.verify.ray.executor import open_verify_executor

    try:
        return open_verify_executor(scale_settings(read_config(config_file, sets, reads=_READS), name, address),
                                    device=device)
    except (ConfigError, RayUnavailable, ValueError) as exc:
        raise fail(str(exc)) from None


def _seeded(config_file: Path | None, sets: list[str]) -> bool:
    """The settings name a seed (the service then judges with it rather than with its own)."""
    section = read_config(config_file, sets, reads=_READS).get("verify")
    return isinstance(section, dict) and "seed" in section


def _judge_one(config: VerifyConfig, problem: Path, candidate: Path, alternatives: list[Alternative], seeded: bool,
               err: Console) -> Verdict:
    """Through the local verifier service when one answers (warm workers), else in a Verifier of this process."""
    from kernelmosaic.verify.service_client import remote_verify
    from kernelmosaic.verify.service_errors import (
        ServiceDeclined,
        ServiceError,
        ServiceGone,
        ServiceUnavailable,
        ServiceUntrusted,
    )

    if config.use_service:
        try:
            return remote_verify(config, problem, candidate, seeded=seeded, alternatives=alternatives)
        except ServiceUnavailable as exc:
            if WORKDIR.get() is not None:
                raise  # a client's command run inside the service (verify/forwarded.py): never judged in it
            if isinstance(exc, ServiceDeclined | ServiceUntrusted | ServiceGone):
                err.print(f"note: {escape(str(exc))}; judging in this process", highlight=False, soft_wrap=True)
        except ServiceError as exc:
            raise fail(f"the verifier service could not judge: {exc}") from None
    from kernelmosaic.verify.progress import phase_progress
    from kernelmosaic.verify.verifier import Verifier

    with stop_on_signal(), Verifier(config) as verifier, \
            phase_progress(err, f"verifying {candidate.name} on {config.device}"):
        return verifier.verify(problem, candidate, alternatives=alternatives)


def _say_verdict(lines: DoneLines, item: str, verdict: Verdict, shapes: bool = False) -> None:
    """`shapes`: add the sizes the problem was judged at (verify-batch, whose problems differ pair to pair)."""
    detail = speed_detail(verdict.timing) if verdict.accepted else verdict.message
    where = time_line(verdict.phase_seconds)
    if shapes and verdict.shapes:
        where = f"{where}\n    shapes: {verdict.shapes}" if where else f"shapes: {verdict.shapes}"
    lines.say(item, verdict.status.value, verdict.seconds, detail, where)


def verify_batch_command(
    source: Annotated[Path, typer.Argument(help="A manifest (.jsonl) or a folder of <pair>/problem.py + candidate*.py.")],
    out: Annotated[Path, typer.Option("--out", help="JSONL of verdicts; pairs already in it are skipped.")] = Path("verdicts.jsonl"),
    device: Device = None,
    precision: Precision = None,
    trials: Trials = None,
    timing: Annotated[bool | None, typer.Option("--timing/--no-timing", help="Time against eager and torch.compile "
                                                "(default on).")] = None,
    policy: PolicyOpt = None,
    shapes: ShapesOpt = None,
    derive_alt: DeriveAlt = None,
    executor: ExecutorOpt = None,
    ray_address: RayAddress = None,
    config_file: ConfigFile = None,
    sets: Sets = [],  # noqa: B006 - typer reads the default, never mutates it
) -> None:
    """Judge many pairs on all visible GPUs (or the CPU), or on a Ray cluster's GPUs, resumably. SOURCE is a manifest (JSON lines of
    {"id", "problem", "candidate"}, paths relative to the manifest) or a folder of <pair>/problem.py + candidate*.py;
    see docs/configuration.md. The output file is written only once a verdict exists."""
    from kernelmosaic.verify.batch import discover_pairs

    console = Console(stderr=True)
    try:
        pairs = discover_pairs(source)
    except InputError as exc:
        raise fail(str(exc)) from None
    if not out.parent.is_dir():
        raise fail(f"--out {out}: the folder {out.parent} does not exist")
    config = cli_settings(config_file, sets, device=device, precision=precision, trials=trials, timing=timing,
                       policy=policy, derive_alt=derive_alt, shapes=shapes)
    runner = _executor(config_file, sets, executor, ray_address, config.device)
    counts = {"accepted": 0, "rejected": 0, "skipped": 0}
    try:
        _batch(pairs, config, out, runner, counts, console, config_file, sets)
    except KeyboardInterrupt:
        console.print(f"interrupted: {counts['accepted'] + counts['rejected']} verdict(s) of this run are in {out}; "
                      "the same command resumes (pairs already judged are skipped).", highlight=False, soft_wrap=True)
        raise typer.Exit(130) from None
    console.print(f"{counts['accepted']} accepted, {counts['rejected']} rejected, {counts['skipped']} already judged -> {out}")
    raise typer.Exit(1 if _any_rejected(out, {pair.id for pair in pairs}) else 0)


def _batch(pairs, config, out: Path, runner, counts: dict[str, int], console: Console, config_file, sets) -> None:
    from kernelmosaic.verify.batch import run_batch
    with stop_on_signal(), runner, Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console) as progress:
        task = progress.add_task("verifying", total=len(pairs))
        lines = DoneLines(console, len(pairs))
        if lines.enabled:  # no bar to watch: say at once what is running, before the first verdict (compiles first)
            console.print(f"judging {len(pairs)} pair(s) on {config.device} ({getattr(runner, 'name', 'local')}); "
                          f"verdicts go to {out}; a line as each arrives", highlight=False, soft_wrap=True)
        console.print(f"shapes: {_SHAPE_RULE[config.shapes]} (verify.shapes = {config.shapes}; each verdict's `shapes` "
                      "says which ran)", highlight=False, soft_wrap=True)

        def on_result(pair, row) -> None:
            key = "skipped" if row is None else ("accepted" if row["verdict"]["accepted"] else "rejected")
            counts[key] += 1
            progress.update(task, advance=1, description=f"verifying ({counts['accepted']} accepted, "
                                                          f"{counts['rejected']} rejected, {counts['skipped']} skipped)")
            if row is None:
                lines.skip()
            elif lines.enabled:
                _say_verdict(lines, pair.id, Verdict.model_validate(row["verdict"]), shapes=True)

        try:
            for _ in run_batch(pairs, config, out, on_result=on_result, seeded=_seeded(config_file, sets),
                               executor=runner):
                pass
        except InputError as exc:
            raise fail(f"{exc} (verdicts so far are in {out})" if out.exists() else str(exc)) from None
        except (Stopped, WorkerDied, WorkerError, DeviceCrowded) as exc:
            if stop_requested():  # the worker died because we stopped
                raise KeyboardInterrupt from None
            kept = f" (verdicts so far are in {out}; the same command judges the rest)" if out.exists() else ""
            raise fail(_could_not_run(exc, config.device) + kept) from None
        except RuntimeError as exc:  # the Ray executor lost a job max_attempts times
            raise fail(f"{exc} (verdicts so far are in {out})") from None


_SHAPE_RULE = {"auto": "on the CPU a task's reference runs at the task's small shapes, any other problem at its own "
                       "sizes; on a GPU every problem at its own sizes",
               "small": "every problem at its task's small shapes",
               "full": "every problem at its own sizes"}


def _any_rejected(out: Path, ids: set[str]) -> bool:
    """Whether a verdict of this batch's pairs in `out` (this run's and those judged before it) is a rejection:
    exit 1, as `verify` exits 1 for a rejected candidate (docs/cli.md)."""
    import json

    for line in out.read_text(encoding="utf-8").splitlines() if out.exists() else []:
        row = json.loads(line)
        if row.get("id") in ids and not row["verdict"]["accepted"]:
            return True
    return False
