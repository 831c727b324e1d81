"""The review log's database guards, on SQLite and PostgreSQL: a writer holding the database cannot choose an id,
insert out of order, backdate an entry, or change or delete one."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text

from kernelmosaic.store import StoreError
from kernelmosaic.store.reviews import ReviewLog

_COLUMNS = "task_id, reference_sha256, kind, decision, reason, changes, reviewer"
_VALUES = "'t1_relu', '', 'decision', 'accept', '', '{}', 'mallory'"


def _db_now(store) -> str:
    if store._engine.dialect.name == "sqlite":
        return "strftime('%Y-%m-%d %H:%M:%f000', 'now')"
    return "timezone('UTC', clock_timestamp())"


def _insert(store, sql: str) -> None:
    store._write(lambda s: s.execute(text(sql)))


def test_ids_and_times_come_from_the_store(store):
    log = ReviewLog(store)
    before = datetime.now(UTC).replace(tzinfo=None) - timedelta(seconds=5)
    first = log.record_decision("t1_relu", "accept", "alice")
    second = log.record_decision("t1_relu", "reject", "bob", "same as t2")
    assert (first.id, second.id) == (1, 2)
    assert before <= first.created.replace(tzinfo=None) <= second.created.replace(tzinfo=None)
    assert second.created.replace(tzinfo=None) <= datetime.now(UTC).replace(tzinfo=None) + timedelta(seconds=5)


def test_a_chosen_id_is_refused(store):
    log = ReviewLog(store)
    log.record_decision("t1_relu", "reject", "alice", "broken reference")
    log.record_decision("t2_sigmoid", "accept", "alice")
    for chosen in (1000, 3):  # far ahead (to stay "latest" forever), and the very next id typed by hand
        if chosen == 3 and store._engine.dialect.name == "sqlite":
            continue  # SQLite would assign 3 itself: a hand-typed 3 is indistinguishable and harmless
        with pytest.raises(StoreError, match="review_events: .*id"):
            _insert(store, f"INSERT INTO review_events (id, {_COLUMNS}, created) "
                           f"VALUES ({chosen}, {_VALUES}, {_db_now(store)})")
    assert [(e.id, e.reviewer) for e in log.events()] == [(1, "alice"), (2, "alice")]
    assert log.record_decision("t1_relu", "accept", "bob").id == 3  # honest appends go on


def test_an_out_of_order_insert_is_refused(store):
    log = ReviewLog(store)
    for n in range(3):
        log.record_decision(f"t{n}", "accept", "alice")
    if store._engine.dialect.name == "postgresql":  # a gap below the latest id, as a rolled-back insert leaves
        _insert(store, "SELECT setval(pg_get_serial_sequence('review_events', 'id'), 1)")
        with pytest.raises(StoreError, match="review_events: id 2 refused"):
            _insert(store, f"INSERT INTO review_events ({_COLUMNS}, created) VALUES ({_VALUES}, now())")
        _insert(store, "SELECT setval(pg_get_serial_sequence('review_events', 'id'), 3)")
    else:  # SQLite has no gaps: an id below the latest is either taken or refused
        with pytest.raises(StoreError, match="review_events: ids are assigned by the store"):
            _insert(store, f"INSERT INTO review_events (id, {_COLUMNS}, created) VALUES (-1, {_VALUES}, "
                           f"{_db_now(store)})")
    assert [e.id for e in log.events()] == [1, 2, 3]
    assert log.record_decision("t9", "accept", "alice").id == 4


def test_a_backdated_time_is_refused_or_replaced(store):
    log = ReviewLog(store)
    log.record_decision("t1_relu", "accept", "alice")
    backdated = f"INSERT INTO review_events ({_COLUMNS}, created) VALUES ({_VALUES}, '2020-01-01 00:00:00')"
    if store._engine.dialect.name == "sqlite":
        with pytest.raises(StoreError, match="review_events: created"):
            _insert(store, backdated)
        assert len(log.events()) == 1
    else:  # PostgreSQL writes its own clock over the writer's value
        _insert(store, backdated)
        assert [e.created.year for e in log.events()] == [datetime.now(UTC).year] * 2


def test_update_and_delete_stay_refused(store):
    log = ReviewLog(store)
    log.record_decision("t1_relu", "reject", "alice", "broken")
    for statement in ("UPDATE review_events SET created = '2020-01-01 00:00:00'", "DELETE FROM review_events"):
        with pytest.raises(StoreError, match="append-only"):
            _insert(store, statement)
    assert [(e.decision, e.reviewer) for e in log.events()] == [("reject", "alice")]
