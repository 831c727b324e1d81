"""Episodes recorded once per test session through the real CPU verifier, and their export."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from sft_kit import RecordingModel, make_task, record_episodes

from kernelmosaic.store import open_store
from kernelmosaic.tasks.sources import export_tasks


@dataclass
class Recorded:
    db: str
    run_id: int
    models: dict[str, RecordingModel]
    tasks_dir: Path
    root: Path


@pytest.fixture(scope="session")
def recorded(tmp_path_factory) -> Recorded:
    root = tmp_path_factory.mktemp("sft")
    db = f"sqlite:///{root / 'km.db'}"
    with open_store(db) as store:
        run_id, models = record_episodes(store, root / "runs")
    tasks_dir = export_tasks([make_task("sft_leaky"), make_task("sft_unsolved")], "folder", root / "tasks")
    return Recorded(db=db, run_id=run_id, models=models, tasks_dir=tasks_dir, root=root)
