"""Every script under scripts/ (the top level, bench/, gpu/) answers `--help` and `-h` with its usage, its header
comment or docstring, and exits 0 without doing anything: no file appears in the repository, in $OUT, in its
working folder or in the temporary folder. A script that ignored the flag ran its benchmark, or downloaded wheels, instead.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted(p for folder in ("scripts", "scripts/bench", "scripts/gpu") for p in (ROOT / folder).iterdir()
                 if p.is_file() and p.suffix != ".md")


def _is_bash(path: Path) -> bool:
    return "bash" in path.read_text(encoding="utf-8").split("\n", 1)[0]


def _first_header_line(path: Path) -> str:
    """The usage's first line: the docstring's, or the first comment line under a shell script's shebang."""
    text = path.read_text(encoding="utf-8")
    if _is_bash(path):
        return text.split("\n")[1].removeprefix("#").strip()
    return (ast.get_docstring(ast.parse(text)) or "").split("\n")[0].strip()


def _untracked() -> set[str]:
    """Files git does not track, ignored ones included (bytecode aside: a test run beside this one writes it)."""
    out = subprocess.run(["git", "status", "--porcelain", "--ignored", "--untracked-files=all"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    return {line[3:] for line in out.splitlines() if line[:2] in ("??", "!!") and "__pycache__" not in line}


def _cases() -> list:
    """(script, flag): `--help` for each, `-h` too where the script answers it itself (argparse answers both alike)."""
    return [pytest.param(path, flag, id=f"{path.relative_to(ROOT)} {flag}") for path in SCRIPTS
            for flag in ("--help", "-h") if flag == "--help" or "ArgumentParser" not in path.read_text("utf-8")]


@pytest.mark.parametrize(("script", "flag"), _cases())
def test_a_script_answers_help_with_its_usage_and_does_nothing(script, flag, tmp_path):
    tmp, out, cwd = tmp_path / "tmp", tmp_path / "out", tmp_path / "cwd"
    tmp.mkdir()
    cwd.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "OUT": str(out), "PYTHONDONTWRITEBYTECODE": "1",
           "PYTHONPATH": str(ROOT / "src")}
    before = _untracked()
    command = ["bash", str(script)] if _is_bash(script) else [sys.executable, str(script)]
    res = subprocess.run([*command, flag], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    header = _first_header_line(script)
    assert header and " ".join(header.split()) in " ".join(res.stdout.split()), f"no usage on stdout:\n{res.stdout}"
    assert not list(tmp.iterdir()), "it wrote to the temporary folder"
    assert not list(cwd.iterdir()), "it wrote to its working folder"
    assert not out.exists(), "it made $OUT"
    assert _untracked() == before, "it wrote into the repository"
