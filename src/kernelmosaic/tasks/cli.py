"""`kernelmosaic tasks list|show|validate|audit|synth|export|import|decontam`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import typer
from rich import box
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from kernelmosaic.commands import Console, fail
from kernelmosaic.tasks.errors import TaskFormatError
from kernelmosaic.tasks.schema import AuditReport, Task

__all__ = ["app"]

app = typer.Typer(no_args_is_help=True)
console = Console()
err = Console(stderr=True)


def _load(source: str) -> list[Task]:
    from kernelmosaic.tasks.sources import load_tasks

    try:
        return load_tasks(source)
    except TaskFormatError as exc:
        raise fail(str(exc)) from None


def _audit(tasks: list[Task], jobs: int, timeout: float, label: str = "auditing", stream: bool = False,
           device: str = "auto") -> list[AuditReport]:
    """Audit with a progress bar on stderr; with `stream`, print each report as one JSON line as it finishes.
    Every report is also cached per task content (`tasks audit --cached`, and the generate gate, read it)."""
    import threading

    from kernelmosaic.tasks.audit.cache import audit_cache_dir, save_audit
    from kernelmosaic.tasks.audit.runner import AuditConfig, audit_tasks, default_jobs

    config = AuditConfig(jobs=jobs or default_jobs(), task_timeout_s=timeout, device=device)
    by_id = {t.id: t for t in tasks}
    lock = threading.Lock()
    unwritable: list[str] = []
    with Progress(TextColumn(f"[bold]{label}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err, transient=True) as bar:
        tid = bar.add_task(label, total=len(tasks))

        def done(report: AuditReport) -> None:
            try:
                save_audit(by_id[report.task_id], report, config)
            except OSError as exc:  # an unwritable cache costs a rerun later, not this audit
                unwritable.append(str(exc))
            with lock:  # reports arrive from one thread per worker
                if stream:
                    typer.echo(report.model_dump_json(by_alias=True))
                bar.advance(tid)

        try:
            reports = audit_tasks(tasks, config, progress=done)
        except ValueError as exc:
            raise fail(f"--device: {exc}") from None
    if unwritable:
        err.print(f"warning: audit cache {audit_cache_dir()} not written: {unwritable[0]}", highlight=False)
    return reports


def _findings_table(reports: list[AuditReport], title: str) -> Table:
    table = Table(title=title)
    for col in ("task", "rule", "severity", "message", "evidence"):
        table.add_column(col, overflow="fold")
    for report in reports:
        for f in report.findings:
            table.add_row(report.task_id, f.rule, f"[red]{f.severity}" if f.severity == "reject" else f.severity,
                          f.message, f.evidence[:200])
    return table


@app.command("list")
def list_command(source: str = typer.Argument("builtin", help="builtin, a folder, a .parquet, kernelbench:PATH"),
                 level: int = typer.Option(0, help="Only this level."),
                 category: str = typer.Option("", help="Only this category."),
                 tag: str = typer.Option("", help="Only tasks with this tag."),
                 as_json: bool = typer.Option(False, "--json", help="One JSON object per line.")) -> None:
    """List tasks of a source."""
    tasks = [t for t in _load(source) if (not level or t.level == level) and (not category or t.category == category)
             and (not tag or tag in t.tags)]
    if as_json:
        for t in tasks:
            typer.echo(json.dumps(t.to_dict()))
        return
    # Identifiers never wrap (an id split inside a word reads as two); below 110 columns dtype, forms and audit give
    # way so that id, category and review fit 80 columns whole, and only the title wraps.
    out = Console()  # the terminal's width now (the module's console keeps the width it was made with)
    wide = out.width >= 110
    columns = ("id", "lvl", "category", *(("dtype", "forms") if wide else ()), "review", *(("audit",) if wide else ()),
               "title")
    caption = None if wide else "dtype, forms and audit: a terminal of 110 columns or more, or --json"
    table = Table(title=f"{len(tasks)} tasks from {source}", box=box.SIMPLE_HEAD, collapse_padding=True,
                  caption=caption)
    for col in columns:
        table.add_column(col, overflow="fold", no_wrap=col != "title")
    for t in tasks:
        forms = "nl+ref" + ("+spec" if t.has_spec else "")
        audit = "-" if t.audit is None else ("[green]pass" if t.audit.passed else "[red]fail")
        if t.audit is not None and t.audit.reference_hash != t.hashes.reference:
            audit = "[yellow]stale"  # audited before the reference last changed
        cells = {"id": t.id, "lvl": str(t.level), "category": t.category, "dtype": t.dtype, "forms": forms,
                 "review": t.review.state, "audit": audit, "title": t.title}
        table.add_row(*(cells[c] for c in columns))
    out.print(table)


@app.command("show")
def show_command(source: str = typer.Argument(..., help="Task source (builtin when only a task id is given)."),
                 task_id: str | None = typer.Argument(None, help="Task id."),
                 form: Literal["all", "nl", "reference", "spec", "json"] = typer.Option(
                     "all", help="all, or one form raw: nl, reference, spec or json.")) -> None:
    """Print one task (all forms, or one form raw): `tasks show l1_relu` or `tasks show SOURCE TASK_ID`."""
    if task_id is None:
        source, task_id = "builtin", source
    match = [t for t in _load(source) if t.id == task_id]
    if not match:
        raise fail(f"no task '{task_id}' in {source}")
    task = match[0]
    if form == "spec" and not task.has_spec:
        raise fail(f"task '{task_id}' has no math spec (its forms: nl, reference)")
    if form in ("nl", "reference", "spec"):
        typer.echo(getattr(task.forms, form))
    elif form == "json":
        typer.echo(json.dumps(task.to_dict(), indent=2))
    else:
        console.rule(f"{task.id}: {task.title} (level {task.level}, {task.category}, {task.dtype})")
        console.print(task.forms.nl, highlight=False)
        console.rule("reference.py")
        console.print(task.forms.reference, highlight=False, markup=False)
        if task.has_spec:
            console.rule("spec.km")
            console.print(task.forms.spec, highlight=False, markup=False)
        console.print(f"shapes.small = {task.shapes.small}  hash = {task.hashes.reference[:16]}", highlight=False)


@app.command("validate")
def validate_command(source: str = typer.Argument("builtin", help="Task source."),
                     audit: bool = typer.Option(True, help="Also audit every task (isolated workers)."),
                     jobs: int = typer.Option(0, help="Audit worker processes (0: one per core but one, at most 16)."),
                     timeout: float = typer.Option(60.0, help="Seconds per task in an audit worker.")) -> None:
    """Check files, ids, shapes and specs (and run audits); exit 1 on any problem. `builtin` also checks counts."""
    from kernelmosaic.tasks.sources import load_tasks_lenient
    from kernelmosaic.tasks.validate import BUILTIN_REQUIREMENTS, Requirements, validate_tasks

    try:
        tasks, errors = load_tasks_lenient(source)
    except TaskFormatError as exc:
        raise fail(str(exc)) from None
    req = BUILTIN_REQUIREMENTS if source == "builtin" else Requirements()
    report = validate_tasks(source, tasks, errors, req)
    both = sum(bool(t.forms.nl.strip() and t.forms.reference.strip()) for t in tasks)
    summary = f"{report.tasks} tasks (levels {report.by_level}), {both} with nl+reference, {report.with_spec} with a spec"
    console.print(summary, highlight=False)
    for issue in report.issues:
        console.print(f"[red]error:[/red] {escape(str(issue))}", highlight=False)
    failed_audits: list[AuditReport] = []
    if audit and tasks:
        reports = _audit(tasks, jobs, timeout)
        failed_audits = [r for r in reports if not r.passed]
        flagged = [r for r in reports if r.flags]
        if failed_audits or flagged:
            console.print(_findings_table(failed_audits + [r for r in flagged if r.passed], "audit findings"))
        console.print(f"audits: {len(reports) - len(failed_audits)}/{len(reports)} passed, "
                      f"{sum(len(r.flags) for r in reports)} flags", highlight=False)
    if report.issues or failed_audits:
        console.print(f"[red]FAILED[/red]: {len(report.issues)} problems, {len(failed_audits)} failed audits")
        raise typer.Exit(1)
    console.print("[green]OK")


@app.command("audit")
def audit_command(source: str = typer.Argument("builtin", help="Task source."),
                  only: list[str] = typer.Option([], "--id", help="Audit only these task ids."),
                  levels: list[int] = typer.Option([], "--level", help="Audit only these levels."),
                  jobs: int = typer.Option(0, help="Worker processes (0: one per core but one, at most 16)."),
                  timeout: float = typer.Option(60.0, help="Seconds per task in a worker."),
                  device: Literal["auto", "cpu", "cuda"] = typer.Option(
                      "auto", help="Where references run: auto (CUDA when there is a GPU), cpu or cuda."),
                  cached: bool = typer.Option(False, "--cached", help="Report from the audit cache only, running "
                                              "nothing; tasks without a current entry are named and fail."),
                  reuse: bool = typer.Option(False, "--reuse", help="Take current cached reports and audit only "
                                             "the other tasks."),
                  write: bool = typer.Option(False, help="Store each report as audit.json in its task folder."),
                  summary: Path | None = typer.Option(None, help="Write summary.json and summary.md (counts, the "
                                                      "failed problems by kind, flags) into this folder."),
                  as_json: bool = typer.Option(False, "--json", help="Print each report as one JSON line as it "
                                                                      "finishes (progress on stderr).")) -> None:
    """Audit tasks in isolated workers: loads, runs, deterministic, non-degenerate output, spec == reference.
    Every report is cached per task content; exit 1 when a task fails (or, with --cached, has no report)."""
    import time

    from kernelmosaic.tasks.audit.cache import cached_audit

    started = time.monotonic()
    tasks = [t for t in _load(source) if (not only or t.id in only) and (not levels or t.level in levels)]
    unknown = sorted(set(only) - {t.id for t in tasks})
    if unknown:
        raise fail(f"--id: no task {', '.join(map(repr, unknown))} in {source}")
    if cached and reuse:
        raise fail("--cached and --reuse exclude each other")
    found = {t.id: r for t in tasks if (cached or reuse) and (r := cached_audit(t)) is not None}
    if as_json:
        for report in found.values():
            typer.echo(report.model_dump_json(by_alias=True))
    missing = [t for t in tasks if t.id not in found]
    ran = {} if cached else {r.task_id: r for r in _audit(missing, jobs, timeout, stream=as_json, device=device)}
    reports = [found.get(t.id) or ran[t.id] for t in tasks if t.id in found or t.id in ran]
    if not as_json:
        if any(r.findings for r in reports):
            console.print(_findings_table([r for r in reports if r.findings], f"audit of {len(reports)} tasks"))
        console.print(f"{sum(r.passed for r in reports)}/{len(reports)} passed"
                      + (f" ({len(found)} from the cache)" if found else ""), highlight=False)
    if cached and missing:
        err.print(f"no current cached audit of {len(missing)} task(s): "
                  f"{', '.join(t.id for t in missing[:20])}{' ...' if len(missing) > 20 else ''}", highlight=False)
    reported = [t for t in tasks if t.id in found or t.id in ran]
    if write:
        _write_reports(reported, reports)
    if summary is not None:
        from kernelmosaic.tasks.audit.summary import summarize_audits, write_summary

        written = write_summary(summarize_audits(source, reported, reports, len(found), time.monotonic() - started),
                                summary)
        err.print(f"wrote {written[1]} and {written[0].name}", highlight=False)
    if not all(r.passed for r in reports) or (cached and missing):
        raise typer.Exit(1)


def _write_reports(tasks: list[Task], reports: list[AuditReport]) -> None:
    """`audit.json` in each task's folder, but never inside the installed package (the builtin set)."""
    import kernelmosaic

    package = Path(kernelmosaic.__file__).resolve().parent
    for task, report in zip(tasks, reports, strict=True):
        folder = Path(task.origin) if task.origin else None
        if folder is None or not (folder / "task.toml").is_file():
            continue
        if folder.resolve().is_relative_to(package):  # the installed package's own tasks stay untouched
            err.print(f"not writing {folder / 'audit.json'}: inside the installed package", highlight=False)
            continue
        (folder / "audit.json").write_text(report.model_dump_json(by_alias=True, indent=2))


@app.command("synth")
def synth_command(n: int = typer.Option(100, "--n", help="Tasks to write."),
                  seed: int = typer.Option(0, help="Seed; the same seed gives the same tasks."),
                  out: Path = typer.Option(..., help="Folder to write task folders into."),
                  audit: bool = typer.Option(True, help="Audit candidates and keep only those that pass."),
                  jobs: int = typer.Option(2, help="Audit worker processes.")) -> None:
    """Compose fused operator chains into new tasks (nl + reference + spec where expressible)."""
    from kernelmosaic.tasks.card import dataset_card
    from kernelmosaic.tasks.folder import save_task_folder
    from kernelmosaic.tasks.synth import synthesize, synthesize_audited

    if audit:
        from kernelmosaic.tasks.audit.runner import AuditConfig

        with Progress(TextColumn("[bold]synthesizing + auditing"), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=err, transient=True) as bar:
            tid = bar.add_task("synth", total=None)
            tasks, rejected = synthesize_audited(n, seed, AuditConfig(jobs=jobs), lambda _r: bar.advance(tid))
    else:
        tasks, rejected = synthesize(n, seed), 0
    for task in tasks:
        save_task_folder(task, out)
    (out / "README.md").write_text(dataset_card(tasks, f"KernelMosaic synthetic tasks (seed {seed})"))
    console.print(f"wrote {len(tasks)} tasks ({sum(t.has_spec for t in tasks)} with a spec) to {out}"
                  + (f"; {rejected} candidates failed their audit and were dropped" if audit else ""))


@app.command("export")
def export_command(source: str = typer.Argument(..., help="Task source."),
                   fmt: str = typer.Option("parquet", "--format", help="folder, parquet (= hf), kernelbench, kernelbench-hf."),
                   out: Path = typer.Option(..., help="Output folder (a dataset card README.md is written in it)."),
                   name: str = typer.Option("KernelMosaic tasks", help="Dataset name for the card.")) -> None:
    """Export tasks to another format."""
    from kernelmosaic.tasks.sources import EXPORT_FORMATS, export_tasks

    if fmt not in EXPORT_FORMATS:
        raise fail(f"unknown format {fmt!r} (known: {', '.join(EXPORT_FORMATS)})")
    tasks = _load(source)
    export_tasks(tasks, fmt, out, name)
    console.print(f"exported {len(tasks)} tasks as {fmt} to {out}")


@app.command("import")
def import_command(source: str = typer.Argument(..., help="A .parquet, exported dataset folder, kernelbench:PATH "
                                                           "or hf:NAME[:SPLIT]."),
                   out: Path = typer.Option(..., help="Folder to write task folders into.")) -> None:
    """Import tasks from another format into editable task folders."""
    from kernelmosaic.tasks.sources import export_tasks

    tasks = _load(source)
    export_tasks(tasks, "folder", out, f"Imported from {source}")
    console.print(f"imported {len(tasks)} tasks into {out}")


@app.command("decontam")
def decontam_command(source: str = typer.Argument("builtin", help="Tasks to check."),
                     against: str = typer.Option(..., help="Evaluation set: a source, or a KernelBench checkout."),
                     ast_threshold: float = typer.Option(0.8, help="Normalized-AST Jaccard threshold."),
                     token_threshold: float = typer.Option(0.8, help="Token n-gram Jaccard threshold."),
                     as_json: bool = typer.Option(False, "--json", help="Print the report as JSON.")) -> None:
    """Report tasks too similar to an evaluation set; exit 1 when any is found."""
    from kernelmosaic.tasks.decontam import DecontamConfig, decontaminate

    against_source = against if ":" in against or not Path(against, "KernelBench").is_dir() else f"kernelbench:{against}"
    report = decontaminate(_load(source), _load(against_source), against,
                           DecontamConfig(ast_threshold=ast_threshold, token_threshold=token_threshold))
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
    else:
        # a line per match, wrapped at spaces only: a task id or a problem's path is never split (a table folded them)
        console.print(f"{len(report.matches)} near matches ({report.checked} tasks vs {report.against_count})",
                      highlight=False)
        for m in report.matches:
            console.print(f"  {escape(m.task_id)} ~ {escape(m.against_origin or m.against_id)} (AST similarity "
                          f"{m.ast_similarity:.2f}, token Jaccard {m.token_jaccard:.2f})", highlight=False, soft_wrap=True)
    if report.matches:
        raise typer.Exit(1)
