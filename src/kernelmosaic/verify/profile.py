"""Profiling for the agent's `profile` tool: the kernel census, and an Nsight Compute digest where `ncu` works."""

from __future__ import annotations

import csv
import io
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

from kernelmosaic.contracts.results import KernelStat
from kernelmosaic.contracts.verdict import Verdict
from kernelmosaic.verify.pool import tool_command

__all__ = ["NCU_METRICS", "ncu_digest", "report_from_verdict"]

NCU_METRICS = {
    "gpu__time_duration.sum": "time_ns",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed": "dram_pct_of_peak",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": "sm_pct_of_peak",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "achieved_occupancy_pct",
    "launch__registers_per_thread": "registers_per_thread",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum": "smem_bank_conflicts",
}


def report_from_verdict(verdict: Verdict) -> list[KernelStat]:
    return list(verdict.census.kernels) if verdict.census else []


def ncu_digest(problem: Path, candidate: Path, device: str, cache_env: dict[str, str], build_cache: Path,
               timeout_s: float = 300) -> tuple[dict, str]:
    """Per-kernel metrics from `ncu` (clocks left alone); ({}, why) where it is absent or fails. The candidate's
    code under ncu is confined as in a candidate worker (`pool.tool_command`)."""
    ncu = shutil.which("ncu")
    if ncu is None:
        return {}, "ncu is not installed here"
    with tempfile.TemporaryDirectory(prefix="km-ncu-") as scratch:
        command = tool_command(problem, candidate, device, build_cache, Path(scratch), cache_env)
        cmd = command.around([ncu, "--clock-control", "none", "--target-processes", "all", "--csv", "--page", "raw",
                              "--metrics", ",".join(NCU_METRICS)])
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=command.env,
                                cwd=command.cwd, start_new_session=True)
        try:
            stdout, stderr = proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:  # ncu and the program under it go together (their own session)
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return {}, f"ncu took longer than {timeout_s:.0f}s"
    text = stdout
    start = text.find('"ID"')
    if proc.returncode != 0 or start < 0:
        return {}, f"ncu failed (exit {proc.returncode}): {(stderr or stdout)[-300:]}"
    rows = list(csv.DictReader(io.StringIO(text[start:])))
    digest: dict[str, dict[str, float]] = {}
    for row in rows[1:] if rows and not rows[0].get("ID", "").isdigit() else rows:  # the first row may hold units
        name = row.get("Kernel Name", "?")[:120]
        metrics = digest.setdefault(name, {})
        for key, short in NCU_METRICS.items():
            try:
                metrics[short] = float(str(row.get(key, "")).replace(",", ""))
            except ValueError:
                continue
    return digest, f"{len(digest)} kernel(s) profiled"


