"""`--sanitize`: compute-sanitizer (memcheck, racecheck, initcheck) over one forward of an accepted candidate.

memcheck and racecheck errors reject; initcheck only flags (PyTorch's own kernels may read memory that was
allocated but never written, e.g. padding). Where the tool is missing or refuses the device, nothing is
claimed: the report says so.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from kernelmosaic.verify.pool import profile_one_command, worker_env
from kernelmosaic.verify.verdict import Finding

__all__ = ["TOOLS", "run_sanitizer", "parse_summary"]

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
    tail = profile_one_command(problem, candidate, "cuda", build_cache)
    with ThreadPoolExecutor(max_workers=len(TOOLS)) as pool:
        runs = {name: pool.submit(_one_tool, tool, name, severity, tail, env, timeout_s) for name, severity in TOOLS.items()}
    findings, report = [], {"ran": True}
    for name, run in runs.items():  # in TOOLS' order, whatever order they finished in
        found, report[name] = run.result()
        findings += found
    return findings, report
