"""Profiling for the agent's `profile` tool: the kernel census, and an Nsight Compute digest where `ncu` works."""

from __future__ import annotations

import csv
import io
import shutil
import subprocess
from pathlib import Path

from kernelmosaic.verify.pool import profile_one_command, worker_env
from kernelmosaic.verify.results import KernelStat
from kernelmosaic.verify.verdict import Verdict

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


def ncu_digest(problem: Path, candidate: Path, device: str, cache_env: dict[str, str], build_cache: Path | None = None,
               timeout_s: float = 300) -> tuple[dict, str]:
    """Per-kernel metrics from `ncu` (clocks left alone); ({}, why) where it is absent or fails."""
    ncu = shutil.which("ncu")
    if ncu is None:
        return {}, "ncu is not installed here"
    env = worker_env(cache_env)
    cmd = [ncu, "--clock-control", "none", "--target-processes", "all", "--csv", "--page", "raw",
           "--metrics", ",".join(NCU_METRICS),
           *profile_one_command(problem, candidate, "cuda" if device.startswith("cuda") else device, build_cache)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, env=env, start_new_session=True)
    except subprocess.TimeoutExpired:
        return {}, f"ncu took longer than {timeout_s:.0f}s"
    text = proc.stdout
    start = text.find('"ID"')
    if proc.returncode != 0 or start < 0:
        return {}, f"ncu failed (exit {proc.returncode}): {(proc.stderr or proc.stdout)[-300:]}"
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


