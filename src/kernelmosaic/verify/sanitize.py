"""`--sanitize`: compute-sanitizer (memcheck, racecheck, initcheck) over one forward of an accepted candidate.

memcheck and racecheck errors reject; initcheck only flags (PyTorch's own kernels may read memory that was
allocated but never written, e.g. padding). Where the tool is missing or refuses the device, nothing is
claimed: the report says so, and a tool whose forward did not complete (no summary, or a non-zero exit) is not a
pass (`contracts.verified.sanitizer_passed`).

The tools slow every kernel, and the start of Python and torch under them, many times over, so they run the problem
at small shapes first: every size constant that only sizes the inputs shrunk to an odd size about a sixteenth of it
(`tasks.shapes.small_shapes`, the rule that audits use too: a (4096, 4096) problem runs at (257, 257)), which also
puts the kernel's tails under the tools. A clean run there is the answer. Otherwise the problem's own shapes decide (a kernel written
for the stated size is legitimate under the kernelbench policy), and errors seen only at the small shapes are a
`sanitizer-small-shapes` flag. The report's `shapes` names the sizes that decided.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from kernelmosaic.tasks.shapes import apply_shape_overrides, small_shapes
from kernelmosaic.verify.pool import profile_one_command, worker_env
from kernelmosaic.verify.verdict import Finding

__all__ = ["TOOLS", "run_sanitizer", "parse_summary", "tool_passed"]

TOOLS = {"memcheck": "reject", "racecheck": "reject", "initcheck": "flag"}
# memcheck/initcheck: "ERROR SUMMARY: 3 errors"; racecheck: "RACECHECK SUMMARY: 2 hazards displayed (2 errors, 0 warnings)"
_SUMMARY = re.compile(r"ERROR SUMMARY:\s*(\d+)\s+error|RACECHECK SUMMARY:.*?\((\d+)\s+errors?", re.I)


def parse_summary(output: str) -> int | None:
    """Error count from compute-sanitizer's summary line; None when the run produced none."""
    found = _SUMMARY.findall(output)
    return int(next(g for g in found[-1] if g)) if found else None


def _one_tool(tool: str, name: str, severity: str, cmd_tail: list[str], env: dict[str, str],
              timeout_s: float) -> tuple[list[Finding], dict]:
    cmd = [tool, "--tool", name, "--print-limit", "5", *cmd_tail]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, env=env, start_new_session=True)
    except subprocess.TimeoutExpired:
        return [], {"errors": None, "note": f"took longer than {timeout_s:.0f}s"}
    text = proc.stdout + proc.stderr
    errors = parse_summary(text)
    report: dict = {"errors": errors, "exit": proc.returncode}
    if errors is None:
        report["note"] = text.strip().splitlines()[-1][:300] if text.strip() else "no output"
        return [], report
    if errors == 0:
        return [], report
    first = next((ln.strip() for ln in text.splitlines() if "=========" in ln and ("Invalid" in ln or "hazard" in ln
                  or "Uninitialized" in ln or "Race" in ln)), "")
    return [Finding(rule=f"sanitizer-{name}", severity=severity,
                    message=f"compute-sanitizer {name} reported {errors} error(s)", evidence=first[:300])], report


def run_sanitizer(problem: Path, candidate: Path, env_extra: dict[str, str], build_cache: Path | None = None,
                  timeout_s: float = 600) -> tuple[list[Finding], dict]:
    """The three tools run side by side (each in its own process and CUDA context): most of each run is starting
    Python and torch under the tool, so the device is held for about one run's time rather than three."""
    tool = shutil.which("compute-sanitizer")
    if tool is None:
        return [], {"ran": False, "note": "compute-sanitizer is not installed here"}
    # Without the caching allocator every tensor is its own cudaMalloc, so memcheck sees bounds per tensor.
    env = worker_env({**env_extra, "PYTORCH_NO_CUDA_MEMORY_CACHING": "1"})
    source = Path(problem).read_text(encoding="utf-8")
    shrunk = small_shapes(source)
    results = _run_tools(tool, problem, candidate, source, shrunk, env, build_cache, timeout_s)
    shapes: dict | str = shrunk or "as stated"
    findings, report = [], {"ran": True}
    if shrunk and not _clean(results):
        # Errors or an unfinished forward at sizes the task never asked for: the problem's own shapes decide (a
        # kernel written for the stated size is legitimate under the kernelbench policy); what the small shapes
        # showed stays a flag.
        small = sorted({f.rule for found, _ in results.values() for f in found if f.severity == "reject"})
        results = _run_tools(tool, problem, candidate, source, {}, env, build_cache, timeout_s)
        if small and _clean(results):
            findings.append(Finding(rule="sanitizer-small-shapes", severity="flag",
                                    message=f"compute-sanitizer found errors at the small shapes {shrunk} only",
                                    evidence=", ".join(small)))
        shapes = "as stated (the small shapes " + ("showed errors)" if small else "did not complete)")
    report["shapes"] = shapes
    for name, (found, result) in results.items():  # in TOOLS' order, whatever order they finished in
        report[name] = result
        findings += found
    return findings, report


def tool_passed(name: str, result: dict | None) -> bool:
    """One tool's report: it finished the forward (its summary read, exit status 0) and, where its errors reject
    (`TOOLS`), found none. The one rule for a clean run here and for a pass in `contracts.verified`."""
    return isinstance(result, dict) and result.get("exit") == 0 and result.get("errors") is not None \
        and (TOOLS[name] != "reject" or result["errors"] == 0)


def _clean(results: dict[str, tuple[list[Finding], dict]]) -> bool:
    return all(tool_passed(name, result) for name, (_, result) in results.items())


def _run_tools(tool: str, problem: Path, candidate: Path, source: str, shrunk: dict[str, int], env: dict[str, str],
               build_cache: Path | None, timeout_s: float) -> dict[str, tuple[list[Finding], dict]]:
    """Every tool over one forward, side by side, at the shapes `shrunk` sets (the problem's own when empty)."""
    with tempfile.TemporaryDirectory(prefix="km-sanitize-") as scratch:
        if shrunk:
            problem = Path(scratch) / Path(problem).name
            problem.write_text(apply_shape_overrides(source, shrunk), encoding="utf-8")
        tail = profile_one_command(problem, candidate, "cuda", build_cache)
        with ThreadPoolExecutor(max_workers=len(TOOLS)) as pool:
            runs = {name: pool.submit(_one_tool, tool, name, severity, tail, env, timeout_s)
                    for name, severity in TOOLS.items()}
            return {name: run.result() for name, run in runs.items()}
