"""Parent side of task audits: prepares jobs, runs worker processes (own process group, timeout per task,
restart after a crash) and turns their JSON results into typed `AuditReport`s. It never runs task code itself.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import torch
from pydantic import BaseModel, ConfigDict, Field

import kernelmosaic
from kernelmosaic.contracts.precision import TOLERANCES
from kernelmosaic.contracts.task_rules import task_finding
from kernelmosaic.host import host_memory_gib
from kernelmosaic.tasks.schema import AuditReport, Finding, Task
from kernelmosaic.tasks.shapes import (
    ShapeOverrideError,
    Size,
    apply_shape_overrides,
    module_constants,
    small_shapes,
)
from kernelmosaic.tasks.spec import SpecError, parse_spec
from kernelmosaic.tasks.spec.compiler import compile_program
from kernelmosaic.tasks.spec.nodes import DTYPES, Program

__all__ = ["AuditConfig", "audit_tasks", "build_job", "default_jobs", "derived_shapes", "worker_gpu"]

log = logging.getLogger(__name__)
WORKER = "kernelmosaic.tasks.audit.worker"


class AuditConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    seeds: list[int] = Field(default_factory=lambda: [0, 1, 2])
    """Input seeds; outputs must differ across them and trivial outputs must fail on all of them."""
    jobs: int = Field(default_factory=lambda: default_jobs(), ge=1)
    """Worker processes running side by side (default: one per core but one, at most 16)."""
    task_timeout_s: float = 60.0
    """Seconds one task may take inside a worker before the worker's process group is killed."""
    startup_timeout_s: float = 180.0
    """Seconds a worker may take to import torch and begin its first task (or between tasks)."""
    max_elements: int = 1 << 24
    """Largest total of input and output elements allowed at the audited shapes; a task without small shapes whose
    stated ones hold more is audited at shapes derived from its reference (`shapes`)."""
    max_default_gb: float = 40.0
    """Inputs plus outputs at the default shapes above this many GiB are flagged (measured on the meta device)."""
    memory_limit_gb: float = 8.0
    """Address-space cap of a CPU-only worker."""
    memory_fraction: float = Field(default=0.9, gt=0, le=1)
    """Share of the host's memory, and of each GPU's, that the workers together may use; each worker gets its part
    (a GPU's share split among the workers on it). A reference above its worker's part is `task-too-large-to-audit`."""
    device: Literal["auto", "cpu", "cuda"] = "auto"
    """Where references run: `auto` is CUDA when the worker sees a GPU (a reference failing there is flagged and
    audited on the CPU), else the CPU."""
    cross_check: bool = True
    """Also run each reference on the other device, when there is one, and flag a failure or a difference."""
    cross_check_elements: int = 1 << 22
    """Cross-check only tasks whose inputs plus outputs hold at most this many elements (a large reference takes
    minutes on the CPU)."""
    shapes: str = "small"
    """Which shapes to audit on: `small` (the task's declared small shapes; a task without them at its stated shapes,
    or, when those hold more than `max_elements`, at `derived_shapes`) or `default` (the stated shapes)."""


def derived_shapes(task: Task, config: AuditConfig) -> dict[str, Size]:
    """The overrides a job carries for a task that declares no small shapes: its input-only size constants made
    small (`tasks.shapes.small_shapes`, the sanitizer's rule). The worker uses them only when the stated shapes
    exceed `max_elements` and the reference runs at them on meta, which the parent, running no task code, cannot
    know."""
    return small_shapes(task.forms.reference) if config.shapes == "small" and not task.shapes.small else {}


def build_job(task: Task, config: AuditConfig) -> tuple[dict | None, list[Finding]]:
    """The worker's job for `task`, or no job and the findings that make running it pointless."""
    try:
        reference = task.problem_source("small" if config.shapes == "small" and task.shapes.small else "default")
    except (ShapeOverrideError, SyntaxError) as exc:
        return None, [task_finding("task-loads", f"cannot apply the small shapes: {exc}", audit=True)]
    atol, rtol = TOLERANCES[task.dtype]
    try:
        alternatives = [task.problem_source(i) for i in range(len(task.shapes.alternatives))]
    except (ShapeOverrideError, SyntaxError) as exc:
        return None, [task_finding("task-alternative-shapes", f"cannot apply: {exc}", audit=True)]
    job = {"id": task.id, "reference": reference, "atol": atol, "rtol": rtol, "seeds": config.seeds,
           "max_elements": config.max_elements, "device": config.device, "cross_check": config.cross_check,
           "cross_check_elements": config.cross_check_elements, "spec_module": "", "spec_inputs": [], "shapes": {},
           "reference_default": task.forms.reference, "alternatives": alternatives,
           "max_default_gb": config.max_default_gb}
    program = None
    if task.has_spec:
        try:
            program = parse_spec(task.forms.spec, f"{task.id}/spec.km")
            job["spec_module"] = _spec_module(task, program, reference)
        except SpecError as exc:
            return None, [task_finding("task-spec-parses", str(exc).splitlines()[0], audit=True)]
        job["spec_inputs"] = [{"name": d.name, "dims": list(d.dims), "torch_dtype": DTYPES[d.dtype]}
                              for d in program.inputs]
    if shrunk := derived_shapes(task, config):
        small = apply_shape_overrides(task.forms.reference, shrunk)
        try:
            spec = _spec_module(task, program, small) if program else ""
        except SpecError:  # the spec does not fit the derived sizes: audit as stated
            return job, []
        job["derived"] = {"shapes": shrunk, "reference": small, "spec_module": spec}
    return job, []


def _spec_module(task: Task, program: Program, reference: str) -> str:
    """The spec compiled for the sizes `reference` sets."""
    sizes = {k: v for k, v in module_constants(reference).items() if isinstance(v, int)}
    return compile_program(program, sizes, f"{task.id}/spec.km")


def default_jobs() -> int:
    """One worker per core but one (the parent follows them), at most 16: each worker runs single-threaded."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(16, cores - 1))


def worker_gpu(index: int, visible: str | None, count: int) -> str | None:
    """`CUDA_VISIBLE_DEVICES` for worker `index`: workers take the visible GPUs in turn (None: leave it alone)."""
    ids = [v for v in visible.split(",") if v.strip()] if visible else [str(i) for i in range(count)]
    return ids[index % len(ids)] if len(ids) > 1 else None


def _src_root() -> str:
    return str(Path(kernelmosaic.__file__).resolve().parent.parent)


def _kill(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):  # it may have exited on its own meanwhile
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def _watch(proc: subprocess.Popen, result_path: Path, config: AuditConfig,
           done: Callable[[str, dict], None]) -> tuple[str | None, set[str]]:
    """Follow a worker's results until it exits or overruns; returns (task it was inside, tasks finished)."""
    current, since, finished, offset = None, time.monotonic(), set(), 0
    while True:
        exited = proc.poll() is not None
        with open(result_path, "rb") as fh:
            fh.seek(offset)
            chunk = fh.read()
        complete = chunk[: chunk.rfind(b"\n") + 1]
        offset += len(complete)
        for line in complete.decode("utf-8").splitlines():
            record = json.loads(line)
            since = time.monotonic()
            if record["event"] == "start":
                current = record["id"]
            else:
                finished.add(record["id"])
                done(record["id"], record)
                current = None
        if exited:
            return current, finished
        limit = config.task_timeout_s if current is not None else config.startup_timeout_s
        if time.monotonic() - since > limit:
            _kill(proc)
            if current is not None:
                done(current, _failure(current, "task-timeout", f"the task ran longer than {limit:.0f} s in the "
                                       "audit worker", ""))
                finished.add(current)
            return None, finished
        time.sleep(0.05)


def _run_chunk(jobs: list[dict], config: AuditConfig, done: Callable[[str, dict], None],
               live: set[subprocess.Popen], gpu: str | None, budgets: dict[str, float]) -> None:
    pending = list(jobs)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([_src_root(), os.environ.get("PYTHONPATH", "")]))
    if gpu is not None:
        env["CUDA_VISIBLE_DEVICES"] = gpu
    while pending:
        with tempfile.TemporaryDirectory(prefix="km-audit-") as scratch:
            job_path, result_path, log_path = (Path(scratch) / n for n in ("job.json", "results.jsonl", "log.txt"))
            job_path.write_text(json.dumps({"tasks": pending, "memory_limit_gb": config.memory_limit_gb,
                                            "device": config.device, "cross_check": config.cross_check, **budgets}),
                                encoding="utf-8")
            result_path.touch()
            with open(log_path, "wb") as log_fh:
                proc = subprocess.Popen([sys.executable, "-m", WORKER, str(job_path), str(result_path)],
                                        stdout=log_fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                        cwd=scratch, env=env, start_new_session=True)
                live.add(proc)
                try:
                    current, finished = _watch(proc, result_path, config, done)
                finally:
                    live.discard(proc)
            tail = log_path.read_text(encoding="utf-8", errors="replace")[-800:]
        if current is not None:  # the worker died inside this task
            done(current, _failure(current, "task-worker-crash", f"the audit worker died (exit {proc.returncode}) "
                                   "while running this task", tail))
            finished.add(current)
        if not finished:  # it never got through a task: another start would fare no better
            for job in pending:
                done(job["id"], _failure(job["id"], "task-worker-crash", "the audit worker failed to start or to "
                                         "make progress", tail))
            return
        pending = [j for j in pending if j["id"] not in finished]


def _failure(task_id: str, rule: str, message: str, evidence: str) -> dict:
    return {"event": "done", "id": task_id, "checks": [rule], "devices": [], "seconds": 0.0,
            "findings": [{"rule": rule, "severity": "reject", "message": message, "evidence": evidence}]}


def audit_tasks(tasks: list[Task], config: AuditConfig | None = None,
                progress: Callable[[AuditReport], None] | None = None) -> list[AuditReport]:
    """Audit every task in isolated workers; reports come back in the order of `tasks`."""
    config = config or AuditConfig()
    if config.device == "cuda" and not torch.cuda.is_available():
        raise ValueError("device 'cuda': this machine has no visible GPU (use 'auto' or 'cpu')")
    by_id = {t.id: t for t in tasks}
    if len(by_id) != len(tasks):
        raise ValueError("task ids must be unique to audit them together")
    reports: dict[str, AuditReport] = {}
    lock = threading.Lock()

    def done(task_id: str, record: dict) -> None:
        task = by_id[task_id]
        # Severity comes from the one task-rule registry, whatever the worker said.
        findings = [task_finding(f["rule"], f["message"], f.get("evidence", ""), audit=True) for f in record["findings"]]
        report = AuditReport(task_id=task_id, passed=not any(f.severity == "reject" for f in findings),
                             findings=findings, checks=record["checks"], devices=record["devices"],
                             shapes=record.get("shapes", {}), reference_hash=task.hashes.reference,
                             seconds=record["seconds"],
                             torch_version=torch.__version__)
        with lock:
            reports[task_id] = report
        if progress:
            progress(report)

    jobs = []
    for task in tasks:
        job, early = build_job(task, config)
        if job is None:
            done(task.id, {"findings": [f.model_dump() for f in early], "checks": [early[0].rule],
                           "devices": [], "seconds": 0.0})
        else:
            jobs.append(job)
    chunks = [jobs[i :: config.jobs] for i in range(config.jobs) if jobs[i :: config.jobs]]
    live: set[subprocess.Popen] = set()
    count = torch.cuda.device_count() if config.device != "cpu" else 0
    gpus = [worker_gpu(i, os.environ.get("CUDA_VISIBLE_DEVICES"), count) if count else None for i in range(len(chunks))]
    # Each worker's share of memory: the host's split among all of them, a GPU's among those on it.
    host = config.memory_fraction * host_memory_gib() / max(1, len(chunks))
    budgets = [{"host_budget_gb": host, "gpu_memory_fraction": config.memory_fraction / gpus.count(g)} for g in gpus]
    threads = [threading.Thread(target=_run_chunk, args=(c, config, done, live, g, b), daemon=True)
               for c, g, b in zip(chunks, gpus, budgets, strict=True)]
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            while thread.is_alive():  # a timed join lets Ctrl-C through
                thread.join(0.5)
    finally:
        for proc in list(live):  # interrupted: workers live in their own sessions, so end them explicitly
            if proc.poll() is None:
                _kill(proc)
    return [reports[t.id] for t in tasks]
