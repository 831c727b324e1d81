"""Audit worker: loads task references and runs the audit rules, isolated from the calling process.

Usage: `python -m kernelmosaic.tasks.audit.worker JOB.json RESULTS.jsonl`. Imports only the standard library
and torch. Results go to RESULTS.jsonl, one JSON object per line (`start` then `done` per task); stdout and
stderr belong to the task code and are never parsed. It protects the caller from crashes, hangs, memory blow-ups
and global-state changes of a reference (the parent kills the process group on timeout); it is not a security
sandbox: the code runs with the user's permissions.

Memory, whatever a reference's size: a CPU-only worker caps its address space; a CUDA worker caps its share of the
GPU (`gpu_memory_fraction`), and before a reference runs, its weights, inputs and outputs are measured on the meta
device against the worker's share of host memory (`host_budget_gb`). Running out is the flag
`task-too-large-to-audit`, never a dead worker.
"""

from __future__ import annotations

import json
import math
import resource
import sys
import time
import traceback
import types

import torch

from kernelmosaic.tasks.audit.compare import abs_max, close_enough, fmt, max_error
from kernelmosaic.tasks.audit.meta import Footprint, audited_job, check_shapes, footprint
from kernelmosaic.tasks.audit.probes import Probe, as_outputs, redraw

__all__ = ["main", "audit_one", "resolve_device", "DISTRIBUTIONS"]

DISTRIBUTIONS = ("given", "given-2", "normal", "uniform01", "wide")


def _load(source: str, name: str) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__file__ = f"<{name}>"
    exec(compile(source, f"<{name}>", "exec"), module.__dict__)  # noqa: S102 - this process exists to run it
    for attr in ("Model", "get_inputs", "get_init_inputs"):
        if not hasattr(module, attr):
            raise AttributeError(f"the module defines no {attr}")
    return module


def _check_spec(job: dict, ref: types.ModuleType, init: list, inputs_for, probe: Probe) -> None:
    probe.checks += ["task-spec-inputs", "task-spec-reference-mismatch"]
    try:
        spec = _load(job["spec_module"], f"{job['id']}/spec.km")
        torch.manual_seed(0)
        spec_model = spec.Model(*init).to(probe.device)
    except Exception as exc:  # noqa: BLE001
        probe.add("task-spec-reference-mismatch", "reject", "the compiled spec does not load with the reference's "
                  "init inputs", f"{type(exc).__name__}: {exc}")
        return
    given = inputs_for(0)
    decls = job["spec_inputs"]
    if len(decls) != len(given):
        probe.add("task-spec-inputs", "reject", f"the spec declares {len(decls)} inputs, get_inputs() returns "
                  f"{len(given)}", "")
        return
    for decl, x in zip(decls, given, strict=True):
        want = tuple(getattr(ref, d, None) if isinstance(d, str) else d for d in decl["dims"])
        shape = tuple(x.shape) if isinstance(x, torch.Tensor) else ()
        if shape != want:
            probe.add("task-spec-inputs", "reject", f"input '{decl['name']}' is declared {decl['dims']} = {want} but "
                      f"get_inputs() gives shape {shape}", "")
        elif isinstance(x, torch.Tensor) and str(x.dtype) != "torch." + decl["torch_dtype"]:
            probe.add("task-spec-inputs", "reject", f"input '{decl['name']}' is declared {decl['torch_dtype']} but "
                      f"get_inputs() gives {x.dtype}", "")
    if any(f["rule"] == "task-spec-inputs" for f in probe.findings):
        return
    for k, dist in enumerate(DISTRIBUTIONS):
        xs = inputs_for(0) if dist == "given" else inputs_for(1) if dist == "given-2" else redraw(given, dist, k)
        try:
            want = probe.run(xs)
        except Exception:  # noqa: BLE001
            continue  # a reference undefined on these inputs (log of negatives) has nothing to compare
        try:
            with torch.no_grad():
                got = as_outputs(spec_model(*xs))
        except Exception as exc:  # noqa: BLE001
            probe.add("task-spec-reference-mismatch", "reject", f"the compiled spec fails on '{dist}' inputs",
                      f"{type(exc).__name__}: {exc}")
            return
        if len(want) != len(got):
            probe.add("task-spec-reference-mismatch", "reject", f"the reference returns {len(want)} outputs, the spec "
                      f"{len(got)}", dist)
            return
        for j, (a, b) in enumerate(zip(want, got, strict=True)):
            # Scale atol with the output's magnitude: sums of many terms carry proportionally larger rounding.
            scale = max(1.0, abs_max(a, finite=True))
            if a.shape != b.shape or not close_enough(a, b, probe.atol * scale, probe.rtol):
                detail = (f"shape {tuple(a.shape)} vs {tuple(b.shape)}" if a.shape != b.shape
                          else f"max abs error {fmt(max_error(a, b))}")
                probe.add("task-spec-reference-mismatch", "reject", f"spec and reference disagree on output {j} with "
                          f"'{dist}' inputs", detail)
                return


def resolve_device(requested: str) -> str:
    """`auto`: CUDA when this process sees a GPU, else the CPU; `cpu` and `cuda` as asked."""
    if requested == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return requested


def audit_one(job: dict) -> dict:
    """Audit one task; torch's global settings are restored afterwards so one reference cannot skew the next."""
    saved = (torch.get_default_dtype(), torch.is_grad_enabled(), torch.get_num_threads())
    try:
        return _audit_one(job)
    finally:
        torch.set_default_dtype(saved[0])
        torch.set_grad_enabled(saved[1])
        torch.set_num_threads(saved[2])
        if torch.cuda.is_initialized():  # the next task gets the memory this one cached
            torch.cuda.empty_cache()


def _out_of_memory(exc: BaseException) -> bool:
    # cuBLAS and cuDNN report a failed workspace allocation in their own words.
    text = str(exc)
    return isinstance(exc, torch.OutOfMemoryError | MemoryError) or any(
        s in text for s in ("can't allocate memory", "out of memory", "ALLOC_FAILED"))


def _too_large(size: Footprint, device: str, budget_gb: float) -> str:
    """Why the audit of a reference of this footprint on `device` would overrun the worker's host budget ("" when
    it fits, or when meta could not measure it: then only the caps below guard). CUDA workers cannot cap their
    address space, so this estimate is what keeps one large reference from exhausting the host's memory."""
    if not (budget_gb and size.known) or size.host_bytes(device) <= budget_gb * 2**30:
        return ""
    return f"about {size.host_bytes(device) / 2**30:.1f} GiB of host memory on {device}, above this worker's " \
           f"{budget_gb:.1f} GiB (weights {size.weight_bytes / 2**30:.1f}, inputs {size.input_bytes / 2**30:.1f}, " \
           f"outputs {size.output_bytes / 2**30:.1f} GiB, measured on meta)"


def _inputs_on(ref: types.ModuleType, device: str):
    def inputs_for(seed: int) -> list:
        # Drawn on the CPU and then moved, so every device sees the same values for a seed.
        torch.manual_seed(seed)
        return [x.to(device) if isinstance(x, torch.Tensor) else x for x in ref.get_inputs()]
    return inputs_for


def _audit_one(job: dict) -> dict:
    findings: list[dict] = []
    checks: list[str] = ["task-loads"]
    devices: list[str] = []
    start = time.perf_counter()
    default = footprint(job["reference_default"], f"{job['id']}/reference.py (default)", _load)
    job, size = audited_job(job, default, _load)

    def result() -> dict:
        return {"event": "done", "id": job["id"], "findings": findings, "checks": checks, "devices": devices,
                "shapes": job.get("shapes", {}), "seconds": round(time.perf_counter() - start, 4)}

    def too_large(reason: str, evidence: str) -> dict:
        checks.append("task-too-large-to-audit")
        findings.append({"rule": "task-too-large-to-audit", "severity": "flag", "message": f"the reference is too "
                         f"large to audit ({reason}); not audited further", "evidence": evidence})
        return result()

    device = resolve_device(job.get("device", "auto"))
    if why := _too_large(size, device, job.get("host_budget_gb", 0.0)):
        return too_large(f"over this worker's host memory on {device}", why)
    try:
        ref = _load(job["reference"], f"{job['id']}/reference.py")
        torch.manual_seed(0)  # weights are made on the CPU: the same on every device
        init = list(ref.get_init_inputs())
        model = ref.Model(*init)
    except BaseException as exc:  # noqa: BLE001 - SystemExit from task code is a finding too
        if _out_of_memory(exc):
            return too_large("building its model ran out of memory", _last_frame(exc))
        findings.append({"rule": "task-loads", "severity": "reject", "message": "the reference does not load",
                         "evidence": _last_frame(exc)})
        return result()
    checks.append("task-runs")
    attempts = [device, "cpu"] if device == "cuda" else [device]
    for attempt in attempts:
        kept = (len(findings), len(checks))
        if attempt != device and (why := _too_large(size, attempt, job.get("host_budget_gb", 0.0))):
            return too_large(f"over this worker's host memory on {attempt}", why)  # the host holds every output
        try:
            probe = Probe(job, model.to(attempt), _inputs_on(ref, attempt), findings, checks, attempt)
            runs = probe.check_outputs(job["seeds"])
            break
        except BaseException as exc:  # noqa: BLE001 - reported as a finding
            del findings[kept[0]:], checks[kept[1]:]
            if _out_of_memory(exc):
                return too_large(f"it ran out of memory on {attempt}", _last_frame(exc))
            if attempt != attempts[-1]:  # fails on CUDA only: a flag, and the audit goes on on the CPU
                checks.append("task-device-mismatch")
                findings.append({"rule": "task-device-mismatch", "severity": "flag", "message": f"the reference fails "
                                 f"on {attempt}; audited on cpu", "evidence": _last_frame(exc)})
                continue
            findings.append({"rule": "task-runs", "severity": "reject", "message": f"the reference fails to run on "
                             f"{attempt}", "evidence": _last_frame(exc)})
            return result()
    devices.append(attempt)
    probe.check_signs(runs[0])
    check_shapes(job, default, _load, probe.add, checks)
    if job.get("spec_module"):
        _check_spec(job, ref, init, probe.inputs_for, probe)
    other = "cpu" if attempt == "cuda" else "cuda" if torch.cuda.is_available() else ""
    numel = sum(x.numel() for x in probe.inputs_for(0) if isinstance(x, torch.Tensor)) + sum(o.numel() for o in runs[0])
    if job.get("cross_check") and other and other not in attempts[:-1] and numel <= job["cross_check_elements"]:
        devices.append(other)
        probe.cross_check(other, runs[0])
    return result()


def _last_frame(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" at {frames[-1].filename}:{frames[-1].lineno}" if frames else ""
    return f"{type(exc).__name__}: {exc}{where}"[:600]


def _clean(obj: object) -> object:
    # JSON results must stay finite: numbers that are not become strings.
    if isinstance(obj, float) and not math.isfinite(obj):
        return fmt(obj)
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_clean(v) for v in obj]
    return obj


def main(argv: list[str]) -> int:
    job_path, result_path = argv
    with open(job_path, encoding="utf-8") as fh:
        batch = json.load(fh)
    device = resolve_device(batch.get("device", "auto"))
    if device == "cuda":
        torch.zeros(1, device="cuda")  # create the CUDA context here, not inside a task's timeout
        if batch.get("gpu_memory_fraction"):  # this worker's share of its GPU: beyond it, OutOfMemoryError
            torch.cuda.set_per_process_memory_fraction(batch["gpu_memory_fraction"])
    elif not (batch.get("cross_check") and torch.cuda.is_available()):
        # CUDA reserves huge virtual ranges, so the address-space cap is for workers that never touch it.
        limit = int(batch.get("memory_limit_gb", 8) * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    torch.set_num_threads(int(batch.get("threads", 1)))
    # The meta device loads its registrations lazily (seconds); pay that here, not inside a task's timeout.
    with torch.device("meta"):
        torch.nn.functional.relu(torch.nn.Linear(2, 2)(torch.empty(1, 2))).sum()
    with open(result_path, "a", encoding="utf-8") as out:
        for job in batch["tasks"]:
            out.write(json.dumps({"event": "start", "id": job["id"]}) + "\n")
            out.flush()
            job = {**job, "host_budget_gb": batch.get("host_budget_gb", 0.0)}
            out.write(json.dumps(_clean(audit_one(job))) + "\n")
            out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
