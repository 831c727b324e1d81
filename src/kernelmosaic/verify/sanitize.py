"""`--sanitize`: compute-sanitizer (memcheck, racecheck, initcheck) over one forward of an accepted candidate.

memcheck and racecheck errors reject; initcheck only flags (PyTorch's own kernels may read memory that was
allocated but never written, e.g. padding). Where the tool is missing or refuses the device, nothing is
claimed: the report says so.
"""

from __future__ import annotations

import re
import shutil
import subprocess
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


def run_sanitizer(problem: Path, candidate: Path, env_extra: dict[str, str], build_cache: Path | None = None,
                  timeout_s: float = 600) -> tuple[list[Finding], dict]:
    tool = shutil.which("compute-sanitizer")
    if tool is None:
        return [], {"ran": False, "note": "compute-sanitizer is not installed here"}
    # Without the caching allocator every tensor is its own cudaMalloc, so memcheck sees bounds per tensor.
    env = worker_env({**env_extra, "PYTORCH_NO_CUDA_MEMORY_CACHING": "1"})
    findings, report = [], {"ran": True}
    for name, severity in TOOLS.items():
        cmd = [tool, "--tool", name, "--print-limit", "5", *profile_one_command(problem, candidate, "cuda", build_cache)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, env=env, start_new_session=True)
        except subprocess.TimeoutExpired:
            report[name] = {"errors": None, "note": f"took longer than {timeout_s:.0f}s"}
            continue
        text = proc.stdout + proc.stderr
        errors = parse_summary(text)
        report[name] = {"errors": errors, "exit": proc.returncode}
        if errors is None:
            report[name]["note"] = text.strip().splitlines()[-1][:300] if text.strip() else "no output"
        elif errors > 0:
            first = next((ln.strip() for ln in text.splitlines() if "=========" in ln and ("Invalid" in ln or "hazard" in ln
                          or "Uninitialized" in ln or "Race" in ln)), "")
            findings.append(Finding(rule=f"sanitizer-{name}", severity=severity,
                                    message=f"compute-sanitizer {name} reported {errors} error(s)", evidence=first[:300]))
    return findings, report
