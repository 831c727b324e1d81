"""The ground floor, the run hallway and the workers' typed replies type-check strictly (pyproject.toml `[tool.mypy]`,
`--strict`): annotated throughout and used as annotated. A change that breaks it fails here with mypy's report."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_typed_floors_check_strictly():
    done = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental"], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "Success: no issues found" in done.stdout
