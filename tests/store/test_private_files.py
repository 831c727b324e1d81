"""What the project writes is its owner's alone: a new SQLite store 0600, the verifier's cache folder 0700, and every
`kernelmosaic` command runs under a 077 umask (exports, reports, runs)."""

from __future__ import annotations

import os
import stat

from typer.testing import CliRunner

from kernelmosaic.cli import app
from kernelmosaic.paths import PRIVATE_UMASK, private_dir
from kernelmosaic.store import open_store


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_new_sqlite_store_is_owner_only(tmp_path):
    old = os.umask(0o022)  # a permissive umask: the store must not depend on the caller's
    try:
        store = open_store(f"sqlite:///{tmp_path / 'km.db'}")
        store.create_run("private", "scripted:x", "builtin", {})
    finally:
        os.umask(old)
    assert _mode(tmp_path / "km.db") == 0o600
    existing = tmp_path / "shared.db"
    existing.touch(mode=0o644)
    existing.chmod(0o644)
    open_store(f"sqlite:///{existing}")
    assert _mode(existing) == 0o644  # a file the user made keeps the mode they gave it


def test_private_dir_is_0700_whatever_the_umask(tmp_path):
    old = os.umask(0o000)
    try:
        made = private_dir(tmp_path / "a" / "cache")
    finally:
        os.umask(old)
    assert _mode(made) == 0o700


def test_every_command_runs_under_the_private_umask():
    old = os.umask(0o022)
    try:
        result = CliRunner().invoke(app, ["tasks", "list", "--level", "1"])
        seen = os.umask(0o022)
    finally:
        os.umask(old)
    assert result.exit_code == 0, result.output
    assert seen == PRIVATE_UMASK
