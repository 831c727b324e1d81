"""Where an extension's build time went, read from what the build tools leave in its directory: ninja's log (one
line per output: the binding unit `main.o`, the CUDA unit `cuda.cuda.o`, the link) and nvcc's own phase timings
(`-time`: cudafe++, cicc, ptxas, the host compiler). The candidate's build is not changed by either; nvcc only writes
one more file. Standard library only."""

from __future__ import annotations

import csv
from pathlib import Path

__all__ = ["NVCC_TIME", "nvcc_time_flags", "steps"]

NVCC_TIME = "km_nvcc_time.csv"


def nvcc_time_flags(build_dir: Path) -> list[str]:
    """The flag that makes nvcc record its phases in the build directory (always the same for a directory, so a
    cached build's command line is unchanged and ninja does not rebuild it)."""
    return ["-time", str(build_dir / NVCC_TIME)]


def steps(build_dir: Path) -> dict[str, float]:
    """Seconds per step of the directory's last build: ninja's outputs (`main.o`, `cuda.cuda.o`, `<name>.so`) and
    nvcc's phases (`nvcc:cicc`, ...; a phase that ran twice, like the two preprocessing passes, is summed).
    Empty where the tools left nothing."""
    found = _ninja(build_dir / ".ninja_log")
    for phase, ms in _nvcc(build_dir / NVCC_TIME).items():
        found[f"nvcc:{phase}"] = round(ms / 1e3, 3)
    return found


def _ninja(log: Path) -> dict[str, float]:
    """The last run's line for each output (ninja appends one per output per run; times are ms from its start)."""
    if not log.is_file():
        return {}
    last: dict[str, float] = {}
    for line in log.read_text(errors="replace").splitlines():
        fields = line.split("\t")
        if line.startswith("#") or len(fields) < 4:
            continue
        try:
            start, end = int(fields[0]), int(fields[1])
        except ValueError:
            continue
        last[fields[3]] = round((end - start) / 1e3, 3)
    return last


def _nvcc(table: Path) -> dict[str, float]:
    if not table.is_file():
        return {}
    phases: dict[str, float] = {}
    with open(table, newline="", errors="replace") as f:
        rows = csv.reader(f)
        next(rows, None)  # the header
        for row in rows:
            if len(row) < 8 or row[7].strip() != "ms":
                continue
            name = row[1].strip()
            try:
                phases[name] = phases.get(name, 0.0) + float(row[6])
            except ValueError:
                continue
    return phases
