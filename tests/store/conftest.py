"""Fixtures for the store tests: a fresh store per test, on SQLite and, when one is given, PostgreSQL.

PostgreSQL runs only with KERNELMOSAIC_TEST_POSTGRES_URL set (e.g. postgresql+psycopg://km@127.0.0.1:55432/kmtest);
its schema is wiped before each test, so point it at a throwaway database.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from kernelmosaic.store import Store, open_store

POSTGRES_ENV = "KERNELMOSAIC_TEST_POSTGRES_URL"


POSTGRES_URL = os.environ.get(POSTGRES_ENV, "")
# Without a server only SQLite runs; test_postgres_is_configured reports that as one visible skip.
BACKENDS = ["sqlite", "postgresql"] if POSTGRES_URL else ["sqlite"]


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store.db'}"
    url = POSTGRES_URL
    engine = create_engine(url)
    with engine.begin() as connection:
        connection.execute(text("DROP SCHEMA public CASCADE"))
        connection.execute(text("CREATE SCHEMA public"))
    engine.dispose()
    return url


@pytest.fixture
def store(db_url: str) -> Store:
    with open_store(db_url) as opened:
        yield opened
