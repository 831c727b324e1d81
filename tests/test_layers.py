"""The floors hold (pyproject.toml `[tool.importlinter]`): no package imports one on a higher floor, and no file of a
package imports, through any chain, a sibling that imports it back. A new import that breaks either fails here with
import-linter's report of the chain."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_import_layers_and_acyclic_siblings_hold():
    command = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
    done = subprocess.run([command, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "floors KEPT" in done.stdout and "no loops between the files of a package KEPT" in done.stdout
