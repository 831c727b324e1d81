"""Store backends chosen by URL scheme: SQLite (the default, a file in the working directory) and PostgreSQL.

A backend only builds the SQLAlchemy engine; the tables and the API on top are shared.
"""

from __future__ import annotations

import logging
import os
import shlex
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.pool import StaticPool

from kernelmosaic.store.errors import StoreError

__all__ = ["DEFAULT_URL", "ENV_VAR", "BACKENDS", "register_backend", "default_url", "db_option", "make_engine",
           "new_sqlite_file", "remove_sqlite_file"]

log = logging.getLogger(__name__)

DEFAULT_URL = "sqlite:///kernelmosaic.db"
"""A file in the working directory, so a fresh machine needs no setup."""
ENV_VAR = "KERNELMOSAIC_DB"

BACKENDS: dict[str, Callable[[str], Engine]] = {}
"""URL scheme without its driver (`sqlite`, `postgresql`) -> engine factory."""


def register_backend(scheme: str, factory: Callable[[str], Engine]) -> None:
    BACKENDS[scheme] = factory


def default_url() -> str:
    return os.environ.get(ENV_VAR) or DEFAULT_URL


def db_option(db: str | None) -> str:
    """` --db URL` for a command line printed to the user (a resume or report hint), when the command ran on a store
    named by `--db` or `$KERNELMOSAIC_DB`; "" for the default store. A password in the URL is shown as `***`."""
    if not db:
        return ""
    try:
        shown = make_url(as_url(db)).render_as_string(hide_password=True) if "://" in db else db
    except ArgumentError:
        shown = db
    return f" --db {shlex.quote(shown)}"


def as_url(url: str) -> str:
    """A database URL; a plain file path (`runs.db`, `/data/km.db`) means a SQLite file there."""
    if "://" in url:
        return url
    return f"sqlite:///{Path(url).expanduser().resolve()}"


def sqlite_file(url: str) -> Path | None:
    """The file a SQLite URL names (None for PostgreSQL or an in-memory database)."""
    parsed = make_url(as_url(url))
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return Path(parsed.database).expanduser()


def new_sqlite_file(db: str | None) -> Path | None:
    """The SQLite file `db` (or the default store) names when it does not exist yet, else None: what a command that
    fails before its run exists removes again (`remove_sqlite_file`)."""
    path = sqlite_file(db or default_url())
    return path if path is not None and not path.exists() else None


def remove_sqlite_file(path: Path) -> None:
    """A store file this command made and never used, with SQLite's journal files beside it (close the store
    first)."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def make_engine(url: str) -> Engine:
    url = as_url(url)
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise StoreError(f"store URL {url!r} is not a database URL (expected e.g. {DEFAULT_URL})") from exc
    scheme = parsed.get_backend_name()
    if scheme not in BACKENDS:
        raise StoreError(f"store URL {url!r}: no backend for scheme {scheme!r}; known: {sorted(BACKENDS)}")
    return BACKENDS[scheme](url)


def _create_private(path: Path) -> None:
    """A new SQLite file is created readable by its owner only (SQLite gives its -wal and -shm files the same
    mode): the store holds prompts, model output and verdicts. An existing file keeps its mode."""
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except FileExistsError:
        pass


def _sqlite_engine(url: str) -> Engine:
    parsed = make_url(url)
    database = parsed.database or ""
    in_memory = database in ("", ":memory:")
    if not in_memory:
        parent = Path(database).expanduser().resolve().parent
        if not parent.is_dir():
            raise StoreError(f"SQLite store {database!r}: directory {str(parent)!r} does not exist")
        _create_private(Path(database).expanduser())
    if in_memory:
        # One shared connection, or every thread would see its own empty database.
        engine = create_engine(url, poolclass=StaticPool, connect_args={"check_same_thread": False})
    else:
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30.0})

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_connection, _record) -> None:  # noqa: ANN001 - DB-API connection
        cursor = dbapi_connection.cursor()
        if not in_memory:
            cursor.execute("PRAGMA journal_mode=WAL")
        # FULL syncs the WAL on every commit: a SIGKILL is already safe with NORMAL in WAL mode, but a
        # step costs a model call and a verification, so one fsync per step is cheap insurance against
        # power loss too.
        cursor.execute("PRAGMA synchronous=FULL")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    return engine


def _postgres_engine(url: str) -> Engine:
    try:
        return create_engine(url, pool_pre_ping=True)
    except ModuleNotFoundError as exc:
        raise StoreError(
            f"store URL {make_url(url).render_as_string(hide_password=True)!r} needs the PostgreSQL driver "
            f"{exc.name!r}; install it (e.g. `pip install 'psycopg[binary]'`)"
        ) from exc


register_backend("sqlite", _sqlite_engine)
register_backend("postgresql", _postgres_engine)
