"""compute-sanitizer over one forward of an accepted CUDA candidate: the race check by default, every tool on request.

The race check (racecheck and synccheck) runs once, at the end, on every accepted CUDA candidate whose source uses
shared memory (`__shared__`, or a launch that asks for dynamic shared memory: `shared_memory_evidence`): a block
reduction missing a `__syncthreads()` is correct on most runs and wrong on some, so the plain trials cannot show it.
`--sanitize` (the agent's final check, evaluation) runs all four tools on every accepted CUDA candidate. Either way
the verdict's `sanitizer` report says which tools ran, or why none did (`skipped`: the CPU device, no shared memory,
the setting off, the tool missing), and a tool that did not finish within its timeout claims nothing: it is killed
with the program under it, its report says so, a `sanitizer-incomplete` flag is recorded, and the verdict stays what
the plain run made it (on CUDA a verified solution still needs a full sanitizer pass, `contracts.verified`).

memcheck, racecheck and synccheck errors reject; initcheck only flags (PyTorch's own kernels may read memory that was
allocated but never written, e.g. padding). Where the tool is missing or refuses the device, nothing is
claimed: the report says so, and a tool whose forward did not complete (no summary, or a non-zero exit) is not a
pass (`contracts.verified.sanitizer_passed`).

The tools slow every kernel, and the start of Python and torch under them, many times over, so they run the problem
at small shapes first: every size constant that only sizes the inputs shrunk to an odd size about a sixteenth of it
(`tasks.shapes.small_shapes`, the rule that audits use too: a (4096, 4096) problem runs at (257, 257)), which also
puts the kernel's tails under the tools, and the model's widths to about a sixteenth that keeps their power-of-two
factor (`small_model_shapes`: a GEMM with 8192 x 8192 weights took 181-266 s under racecheck on the H100 with only
its batch shrunk); where that forward does not finish, the inputs' sizes alone. A clean run there is the answer. Otherwise the problem's own shapes decide (a kernel written
for the stated size is legitimate under the kernelbench policy), and errors seen only at the small shapes are a
`sanitizer-small-shapes` flag. The report's `shapes` names the sizes that decided.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

from kernelmosaic.contracts.sanitizer import TOOLS, tool_passed
from kernelmosaic.contracts.verdict import Finding
from kernelmosaic.tasks.shapes import apply_shape_overrides, small_model_shapes, small_shapes
from kernelmosaic.verify.pool import ToolCommand, tool_command, tool_layers
from kernelmosaic.verify.sandbox.kmworker.profile_one import READY

Gate = Callable[[], AbstractContextManager]
"""Holds the device while the tools' forwards run (`DeviceHold.shared`: no timing phase overlaps them)."""

__all__ = ["RACE_TOOLS", "run_sanitizer", "parse_summary", "shared_memory_evidence",
           "sanitizer_plan"]

RACE_TOOLS = ("racecheck", "synccheck")
"""The race check: shared-memory hazards (racecheck) and barriers used wrongly (synccheck)."""
# `__shared__` arrays, and launches that ask for dynamic shared memory: a third launch argument other than 0
# (`<<<grid, block, smem>>>`), the attribute that raises its limit, or CuPy's `shared_mem=`.
_SHARED = (re.compile(r"\b__shared__\b"), re.compile(r"cudaFuncAttributeMaxDynamicSharedMemorySize"),
           re.compile(r"\bshared_mem\s*=\s*(?!0\b)\w"))
_LAUNCH = re.compile(r"<<<(.*?)>>>", re.S)


def _launch_args(config: str) -> list[str]:
    """A launch configuration's arguments, split at the commas outside brackets (`dim3(a, b)` is one)."""
    args, depth, start = [], 0, 0
    for k, ch in enumerate(config):
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            args.append(config[start:k].strip())
            start = k + 1
    return [*args, config[start:].strip()]
# memcheck/initcheck: "ERROR SUMMARY: 3 errors"; racecheck: "RACECHECK SUMMARY: 2 hazards displayed (2 errors, 0 warnings)"
_SUMMARY = re.compile(r"ERROR SUMMARY:\s*(\d+)\s+error|RACECHECK SUMMARY:.*?\((\d+)\s+errors?", re.I)


def parse_summary(output: str) -> int | None:
    """Error count from compute-sanitizer's summary line; None when the run produced none."""
    found = _SUMMARY.findall(output)
    return int(next(g for g in found[-1] if g)) if found else None


def shared_memory_evidence(candidate_src: str) -> str:
    """The first place the candidate's source uses shared memory (the matched text), or "" when it does not."""
    found = [m for pattern in _SHARED if (m := pattern.search(candidate_src)) is not None]
    found += [m for m in _LAUNCH.finditer(candidate_src)
              if len(args := _launch_args(m.group(1))) >= 3 and args[2] not in ("0", "0u", "0U", "nullptr", "")]
    if not found:
        return ""
    first = min(found, key=lambda m: m.start())
    return f"line {candidate_src.count(chr(10), 0, first.start()) + 1}: {first.group(0)[:80]}"


def sanitizer_plan(device: str, sanitize: bool, race_check: bool, candidate_src: str) -> tuple[tuple[str, ...], str]:
    """The tools to run over an accepted candidate, and one line for the report saying why (or why none)."""
    if not device.startswith("cuda"):
        return (), f"not run: the {device} device runs no CUDA kernels"
    if sanitize:
        return tuple(TOOLS), "every tool (--sanitize)"
    shared = shared_memory_evidence(candidate_src)
    if not shared:
        return (), "race check not needed: the candidate's source uses no shared memory"
    if not race_check:
        return (), f"race check skipped: verify.race_check is off (the source uses shared memory, {shared})"
    return RACE_TOOLS, f"race check: the source uses shared memory ({shared})"


def _start(tool: str, name: str, command: ToolCommand) -> subprocess.Popen:
    cmd = command.around([tool, "--tool", name, "--print-limit", "5"])
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=command.env,
                            cwd=command.cwd, start_new_session=True)


def _finish(proc: subprocess.Popen, name: str, severity: str, timeout_s: float, started: float
            ) -> tuple[list[Finding], dict]:
    try:
        stdout, stderr = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:  # the tool and the program under it go together (their own session)
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        stages = _stages((stdout or "") + (stderr or ""), started)
        last = max(stages, key=lambda stage: (_ORDER.get(stage, -1), stages[stage])) if stages else "none"
        report = {"errors": None, "timed_out": True,
                  "note": f"took longer than {timeout_s:.0f}s: killed (the target's last stage: {last})"}
        if stages:
            report["stages_s"] = stages
        return [], report
    text = stdout + stderr
    errors = parse_summary(text)
    report: dict = {"errors": errors, "exit": proc.returncode}
    stages = _stages(text, started)
    if stages:
        report["stages_s"] = stages
    if errors is None:
        report["note"] = text.strip().splitlines()[-1][:300] if text.strip() else "no output"
        return [], report
    if errors == 0:
        return [], report
    first = next((ln.strip() for ln in text.splitlines() if "=========" in ln and ("Invalid" in ln or "hazard" in ln
                  or "Uninitialized" in ln or "Race" in ln)), "")
    return [Finding(rule=f"sanitizer-{name}", severity=severity,
                    message=f"compute-sanitizer {name} reported {errors} error(s)", evidence=first[:300])], report


_STAGE = re.compile(r"^km-profile-one stage (\w+) (\d+(?:\.\d+)?)$", re.M)
_ORDER = {stage: i for i, stage in enumerate(("start", "torch", "loaded", "ready", "go", "done"))}
"""`profile_one`'s stages in the order it reaches them (a timed-out run names the furthest it got)."""


def _stages(text: str, started: float) -> dict[str, float]:
    """When each step of the run under the tool ended, in seconds from the tool's start (`profile_one`'s stage
    lines; the candidate's code could print such lines too, so they only describe, never judge)."""
    return {m.group(1): round(float(m.group(2)) - started, 2) for m in _STAGE.finditer(text)}


def run_sanitizer(problem: Path, candidate: Path, env_extra: dict[str, str], build_cache: Path,
                  timeout_s: float = 600, tools: Sequence[str] = tuple(TOOLS), gate: Gate = nullcontext,
                  gated: bool = False) -> tuple[list[Finding], dict]:
    """`tools` run side by side (each in its own process and CUDA context), `gate()` (the device held shared) around
    them. Most of each run is starting Python and torch under the tool, which runs no kernel: `gated` enters the gate
    only once a tool's target is set up (`verify.sanitize_gated`, see `_run_tools`). Each tool's report has
    `device_held_s`, `set_up_s` when gated, and the target's `stages_s`. The candidate's code under each tool is
    confined as in a candidate worker (`pool.tool_command`); the report names the layers."""
    tool = shutil.which("compute-sanitizer")
    if tool is None:
        return [], {"ran": False, "tools": list(tools), "skipped": "compute-sanitizer is not installed here"}
    # Without the caching allocator every tensor is its own cudaMalloc, so memcheck sees bounds per tensor.
    env = {**env_extra, "PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}
    source = Path(problem).read_text(encoding="utf-8")
    chosen = {name: TOOLS[name] for name in tools}
    findings, report = [], {"ran": True, "tools": list(chosen), "isolation": tool_layers("cuda")}
    # The model's widths shrunk too first, then the inputs' sizes only: a forward that does not complete at one (the
    # candidate or the problem ties a size to another) tries the next.
    tiers = [t for t in (small_model_shapes(source), small_shapes(source)) if t]
    shapes: dict | str = "as stated"
    small: list[str] = []
    tried: list[dict] = []
    results = None
    for shrunk in tiers:
        tried.append(shrunk)
        results = _run_tools(tool, problem, candidate, source, shrunk, env, build_cache, timeout_s, chosen, gate,
                             gated)
        if _clean(results):
            shapes = shrunk
            break
        small = sorted({f.rule for found, _ in results.values() for f in found if f.severity == "reject"})
        if small:
            break
    if shapes == "as stated":
        # Errors or no finished forward at sizes the task never asked for: the problem's own shapes decide (a kernel
        # written for the stated size is legitimate under the kernelbench policy); what the small shapes showed
        # stays a flag.
        results = _run_tools(tool, problem, candidate, source, {}, env, build_cache, timeout_s, chosen, gate, gated)
        if small and _clean(results):
            findings.append(Finding(rule="sanitizer-small-shapes", severity="flag",
                                    message=f"compute-sanitizer found errors at the small shapes {tried[-1]} only",
                                    evidence=", ".join(small)))
        if tried:
            shapes = "as stated (the small shapes " + ("showed errors)" if small else "did not complete)")
    report["shapes"] = shapes
    for name, (found, result) in results.items():  # in TOOLS' order, whatever order they finished in
        report[name] = result
        findings += found
    unfinished = [name for name, (_, result) in results.items() if result.get("errors") is None]
    if unfinished:
        why = "; ".join(f"{name}: {results[name][1].get('note', 'no summary')}" for name in unfinished)
        findings.append(Finding(rule="sanitizer-incomplete", severity="flag",
                                message=f"compute-sanitizer {', '.join(unfinished)} did not finish the forward, so it "
                                        "claims nothing (the verdict is the plain run's; not verified on CUDA until a "
                                        "full sanitizer run passes)", evidence=why[:300]))
    return findings, report


def _clean(results: dict[str, tuple[list[Finding], dict]]) -> bool:
    return all(tool_passed(name, result) for name, (_, result) in results.items())


def _run_tools(tool: str, problem: Path, candidate: Path, source: str, shrunk: dict[str, int], env: dict[str, str],
               build_cache: Path, timeout_s: float, tools: dict[str, str], gate: Gate, gated: bool = True
               ) -> dict[str, tuple[list[Finding], dict]]:
    """Every tool over one forward, side by side, at the shapes `shrunk` sets (the problem's own when empty). Each
    tool's target runs in a scratch folder of its own; the shrunk problem lies beside them, where none may write
    (one tool's candidate process must not change the problem another tool's process is about to load), as do the
    go files when `gated` (otherwise `gate()` spans the tools' whole run): each target sets up (`profile_one --gate`) and waits for its own. The device is held (`gate()`) from
    the first target's being ready until the last tool has ended, and each target gets its go as soon as it is ready:
    a target that cannot set up while another tool's target lives (compute-sanitizer's tools may take the device's
    debugging session one at a time) is let go after that one ends, never waited for before it."""
    with tempfile.TemporaryDirectory(prefix="km-sanitize-") as scratch:
        if shrunk:
            problem = Path(scratch) / Path(problem).name
            problem.write_text(apply_shape_overrides(source, shrunk), encoding="utf-8")
        gos = {name: Path(scratch) / f"go-{name}" for name in tools} if gated else {}
        commands = {}
        for name in tools:
            (Path(scratch) / name).mkdir()
            commands[name] = tool_command(problem, candidate, "cuda", build_cache, Path(scratch) / name, env,
                                          gate=gos.get(name))
        with nullcontext() if gated else gate():  # ungated: the device held shared for the tools' whole run
            held = time.perf_counter()
            started = time.time()
            procs = {name: _start(tool, name, commands[name]) for name in tools}
            with ThreadPoolExecutor(max_workers=len(tools)) as pool:
                runs = {name: pool.submit(_finish, procs[name], name, severity, timeout_s, started)
                        for name, severity in tools.items()}
                hold = _go_when_ready(runs, procs, commands, gos, started, gate) if gated else {}
                results = {name: run.result() for name, run in runs.items()}
            hold = hold or {"device_held_s": round(time.perf_counter() - held, 2)}
        for _, report in results.values():
            report.update(hold)
        return results


def _go_when_ready(runs: dict, procs: dict[str, subprocess.Popen], commands: dict[str, ToolCommand],
                   gos: dict[str, Path], started: float, gate: Gate) -> dict[str, float]:
    """The gated hold: wait for the first target to be set up, enter `gate()`, give each target its go as soon as it
    is ready, leave when every tool has ended. Returns `set_up_s` and `device_held_s`."""
    def ready(name: str) -> bool:
        return runs[name].done() or (commands[name].cwd / READY).exists()

    try:
        while not any(ready(name) for name in runs):
            time.sleep(0.05)
        set_up = time.time() - started
        with gate():
            held = time.perf_counter()
            while not all(run.done() for run in runs.values()):
                for name in runs:
                    if ready(name) and not gos[name].exists():
                        gos[name].touch()
                time.sleep(0.05)
            held = time.perf_counter() - held
    finally:  # cut short (an interrupt, the hold refused): no target is left waiting for its go
        for name, proc in procs.items():
            if proc.poll() is None and not gos[name].exists():
                os.killpg(proc.pid, signal.SIGKILL)
    return {"set_up_s": round(set_up, 2), "device_held_s": round(held, 2)}
