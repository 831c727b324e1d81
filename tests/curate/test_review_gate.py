"""The append-only review log in the store and the gate `generate` will use."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from kernelmosaic.curate.review import accepted_task_ids, apply_review
from kernelmosaic.store import StoreError
from kernelmosaic.store.reviews import FieldChange, ReviewLog

from .conftest import review_tasks


def test_log_refuses_update_and_delete(store):
    log = ReviewLog(store)
    log.record_decision("t1_relu", "accept", "alice")
    for statement in ("UPDATE review_events SET decision = 'reject'", "DELETE FROM review_events"):
        with pytest.raises(StoreError, match="append-only"):
            store._write(lambda s, sql=statement: s.execute(text(sql)))
    assert [(e.decision, e.reviewer) for e in log.events()] == [("accept", "alice")]


def test_decisions_need_reviewer_and_reason(store):
    log = ReviewLog(store)
    with pytest.raises(StoreError, match="reviewer"):
        log.record_decision("t1_relu", "accept", "  ")
    with pytest.raises(StoreError, match="needs a reason"):
        log.record_decision("t1_relu", "reject", "alice", "")
    with pytest.raises(StoreError, match="unknown decision"):
        log.record_decision("t1_relu", "approve", "alice")
    with pytest.raises(StoreError, match="nothing changed"):
        log.record_edit("t1_relu", {}, "alice")
    assert log.events() == []


def test_without_a_review_every_task_goes_through(store):
    gate = accepted_task_ids(store, ["t1_relu", "t2_sigmoid"])
    assert not gate.reviewed and gate.allowed == ["t1_relu", "t2_sigmoid"]
    assert gate.pending == ["t1_relu", "t2_sigmoid"] and "running all" in gate.message


def test_gate_lets_only_accepted_tasks_through(store):
    tasks = review_tasks()
    hashes = {t.id: t.hashes.reference for t in tasks}
    log = ReviewLog(store)
    log.record_decision("t1_relu", "accept", "alice", reference_sha256=hashes["t1_relu"])
    log.record_decision("t2_sigmoid", "accept", "alice", reference_sha256=hashes["t2_sigmoid"])
    log.record_decision("t2_sigmoid", "reject", "bob", "duplicate of t1", reference_sha256=hashes["t2_sigmoid"])
    log.record_decision("t3_tanh", "needs-edit", "bob", "say the dtype", reference_sha256=hashes["t3_tanh"])
    gate = accepted_task_ids(store, [t.id for t in tasks], hashes)
    assert gate.reviewed
    assert (gate.accepted, gate.rejected, gate.needs_edit, gate.pending) == (
        ["t1_relu"], ["t2_sigmoid"], ["t3_tanh"], ["t4_row_sum"])
    assert gate.allowed == ["t1_relu"]
    assert gate.message.startswith("review gate: running the 1 accepted of 4 tasks")


def test_edit_or_changed_reference_reopens_a_decision(store):
    tasks = review_tasks()
    log = ReviewLog(store)
    log.record_decision("t1_relu", "accept", "alice", reference_sha256=tasks[0].hashes.reference)
    log.record_decision("t2_sigmoid", "accept", "alice", reference_sha256="0" * 64)  # another reference version
    log.record_edit("t1_relu", {"nl": FieldChange(old=tasks[0].forms.nl, new="ReLU, edited.\n")}, "bob")
    gate = accepted_task_ids(store, ["t1_relu", "t2_sigmoid"], {t.id: t.hashes.reference for t in tasks})
    assert gate.accepted == [] and gate.pending == ["t1_relu", "t2_sigmoid"] and gate.allowed == []
    log.record_decision("t1_relu", "accept", "alice", reference_sha256=tasks[0].hashes.reference)
    kept, gate = apply_review(store, tasks)
    assert [t.id for t in kept] == ["t1_relu"]
    assert kept[0].forms.nl == "ReLU, edited.\n"
    assert kept[0].review.state == "approved" and kept[0].review.reviewer == "alice"
    assert tasks[0].forms.nl != "ReLU, edited.\n"  # the caller's task objects are left alone
