"""Database-level guards of the review log (`review_events`): rows are only inserted, in order, with the
store's ids and the database's clock.

Protects against a writer that holds the database (a script, a second program, a hand-typed INSERT) changing
or deleting a decision, or backdating one: choosing an id below the latest, or a time of its own, so that an
old decision appears to come after a newer one. Does not protect against anyone who can drop the triggers
(the database's owner): they keep honest writers honest and make tampering a deliberate DDL act.

SQLite: ids are dense (each new id is the previous largest + 1, which is what SQLite assigns when none is
given) and `created` must be the database's own `now`, written by the insert itself; anything else aborts.
PostgreSQL: the id must be the value the table's sequence just issued in this session and larger than every
id before it; `created` is overwritten with the database's clock, so a client's value is ignored.
Both: `created` never goes backwards from the row before it.
"""

from __future__ import annotations

from sqlalchemy import func, literal_column, text
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

__all__ = ["install_review_guards", "store_clock", "lock_for_append"]

_SQLITE_NOW = "strftime('%Y-%m-%d %H:%M:%f000', 'now')"
"""The database's UTC time in the text form SQLAlchemy stores SQLite datetimes in (microseconds, 6 digits)."""

_SQLITE = [
    *(f"CREATE TRIGGER IF NOT EXISTS review_events_no_{op.lower()} BEFORE {op} ON review_events "
      "BEGIN SELECT RAISE(ABORT, 'review_events is append-only'); END" for op in ("UPDATE", "DELETE")),
    "CREATE TRIGGER IF NOT EXISTS review_events_store_ids AFTER INSERT ON review_events "
    "WHEN NEW.id <> 1 + coalesce((SELECT max(id) FROM review_events WHERE id <> NEW.id), 0) "
    "BEGIN SELECT RAISE(ABORT, 'review_events: ids are assigned by the store in order (previous largest + 1); "
    "insert without an id'); END",
    "CREATE TRIGGER IF NOT EXISTS review_events_time_order AFTER INSERT ON review_events "
    "WHEN NEW.created < coalesce((SELECT created FROM review_events WHERE id < NEW.id ORDER BY id DESC LIMIT 1), '') "
    "BEGIN SELECT RAISE(ABORT, 'review_events: created is earlier than the previous entry (the clock went back); "
    "retry once the clock has passed it'); END",
    "CREATE TRIGGER IF NOT EXISTS review_events_store_clock AFTER INSERT ON review_events "
    f"WHEN NEW.created IS NOT {_SQLITE_NOW} "
    "BEGIN SELECT RAISE(ABORT, 'review_events: created is the database''s clock; insert it as "
    f"{_SQLITE_NOW.replace(chr(39), chr(39) * 2)}'); END",
]

_PG = [
    "CREATE OR REPLACE FUNCTION review_events_append_only() RETURNS trigger AS $$ BEGIN "
    "RAISE EXCEPTION 'review_events is append-only'; END $$ LANGUAGE plpgsql",
    "CREATE OR REPLACE TRIGGER review_events_append_only BEFORE UPDATE OR DELETE ON review_events "
    "FOR EACH ROW EXECUTE FUNCTION review_events_append_only()",
    """CREATE OR REPLACE FUNCTION review_events_in_order() RETURNS trigger AS $$
DECLARE issued bigint; last_id integer; last_created timestamp;
BEGIN
  BEGIN
    issued := currval(pg_get_serial_sequence('review_events', 'id'));
  EXCEPTION WHEN object_not_in_prerequisite_state THEN issued := NULL;
  END;
  SELECT id, created INTO last_id, last_created FROM review_events ORDER BY id DESC LIMIT 1;
  IF issued IS NULL OR NEW.id <> issued OR NEW.id <= coalesce(last_id, 0) THEN
    RAISE EXCEPTION 'review_events: id % refused: ids are issued by the table''s sequence in order (latest %); '
      'insert without an id', NEW.id, coalesce(last_id, 0);
  END IF;
  NEW.created := clock_timestamp() AT TIME ZONE 'UTC';
  IF last_created IS NOT NULL AND NEW.created < last_created THEN
    RAISE EXCEPTION 'review_events: the clock is earlier than the previous entry (%); retry once it has passed it',
      last_created;
  END IF;
  RETURN NEW;
END $$ LANGUAGE plpgsql""",
    "CREATE OR REPLACE TRIGGER review_events_in_order BEFORE INSERT ON review_events "
    "FOR EACH ROW EXECUTE FUNCTION review_events_in_order()",
]


def install_review_guards(session: Session) -> None:
    """Create the triggers (idempotent) on SQLite or PostgreSQL; other databases get none."""
    dialect = session.get_bind().dialect.name
    for statement in _SQLITE if dialect == "sqlite" else _PG if dialect == "postgresql" else []:
        session.execute(text(statement))


def store_clock(session: Session) -> ColumnElement:
    """The SQL expression an insert writes into `created`: the database's clock, evaluated by the insert."""
    if session.get_bind().dialect.name == "sqlite":
        return literal_column(_SQLITE_NOW)
    return func.timezone("UTC", func.clock_timestamp())


def lock_for_append(session: Session) -> None:
    """On PostgreSQL, serialize appends so that sequence order, commit order and clock order agree (a second
    writer waits instead of being refused as out of order). SQLite writers are serialized by the database."""
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text("LOCK TABLE review_events IN SHARE ROW EXCLUSIVE MODE"))
