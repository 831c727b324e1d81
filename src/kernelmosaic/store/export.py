"""Trajectories to and from JSON Lines: one `kernelmosaic.trajectory/1` object per line."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from pydantic import ValidationError

from kernelmosaic.contracts.trajectory import TRAJECTORY_SCHEMA, Trajectory, parse_trajectory
from kernelmosaic.store.errors import StoreError
from kernelmosaic.store.store import Store

__all__ = ["write_jsonl", "export_run", "read_jsonl"]


def write_jsonl(trajectories: Iterable[Trajectory], out: Path) -> int:
    """Write atomically (temp file, then rename) so a reader never sees half a file; returns the count."""
    out = Path(out)
    if not out.parent.is_dir():
        raise StoreError(f"{out}: directory {out.parent} does not exist")
    partial = out.with_name(out.name + ".partial")
    count = 0
    try:
        with partial.open("w", encoding="utf-8") as handle:
            for trajectory in trajectories:
                handle.write(trajectory.model_dump_json(by_alias=True) + "\n")
                count += 1
        os.replace(partial, out)
    finally:
        partial.unlink(missing_ok=True)
    return count


def export_run(store: Store, run_id: int, out: Path, done_only: bool = False) -> int:
    """Every episode of the run (only finished-normally ones with `done_only`) as JSONL; returns the count."""
    store.get_run(run_id)  # a clear NotFoundError before an empty file is written
    return write_jsonl(store.iter_trajectories(run_id, done_only=done_only), out)


def read_jsonl(path: Path) -> list[Trajectory]:
    """Parse a trajectory JSONL file; errors name the file and line."""
    path = Path(path)
    trajectories = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise StoreError(f"{path}: cannot read: {exc.strerror}") from exc
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            trajectories.append(parse_trajectory(line))
        except (ValidationError, ValueError) as exc:
            raise StoreError(f"{path}:{number}: not a {TRAJECTORY_SCHEMA} object: {exc}") from exc
    return trajectories
