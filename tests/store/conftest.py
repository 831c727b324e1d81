"""Fixtures for the store tests: a fresh SQLite store per test."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelmosaic.store import Store, open_store


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'store.db'}"


@pytest.fixture
def store(db_url: str) -> Store:
    with open_store(db_url) as opened:
        yield opened
