"""Fixtures for the store tests: a fresh store per test, on SQLite and on PostgreSQL.

PostgreSQL is KERNELMOSAIC_TEST_POSTGRES_URL when set (its schema is wiped before each test, so point it at a
throwaway database); otherwise a throwaway cluster started with `initdb`/`pg_ctl` for the session (CI has both).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pg_cluster import ThrowawayCluster, can_start
from sqlalchemy import create_engine, text

from kernelmosaic.store import Store, open_store

POSTGRES_ENV = "KERNELMOSAIC_TEST_POSTGRES_URL"


POSTGRES_URL = os.environ.get(POSTGRES_ENV, "")
# Without a server or the tools to start one only SQLite runs; test_postgres_is_configured reports that as a skip.
BACKENDS = ["sqlite", "postgresql"] if POSTGRES_URL or can_start() else ["sqlite"]


@pytest.fixture(scope="session")
def postgres_url() -> str:
    if POSTGRES_URL:
        yield POSTGRES_URL
        return
    if not can_start():
        pytest.skip(f"PostgreSQL store tests not run: set {POSTGRES_ENV} or install initdb/pg_ctl and psycopg")
    cluster = ThrowawayCluster()
    try:
        yield cluster.start()
    finally:
        cluster.stop()


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store.db'}"
    url = request.getfixturevalue("postgres_url")
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
