"""Appending events: replays are idempotent, conflicts and gaps are refused, episodes resume."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select
from store_helpers import every_event_type

from kernelmosaic.contracts.messages import Message
from kernelmosaic.contracts.trajectory import MessageEvent, Totals
from kernelmosaic.store import EventConflictError, NotFoundError, Store, StoreError
from kernelmosaic.store.schema import EventRow


def _event_rows(store: Store, episode_id: int) -> int:
    return store._read(lambda s: s.scalar(select(func.count()).where(EventRow.episode_id == episode_id)))


def test_same_event_twice_is_one_row(store: Store) -> None:
    episode = store.start_episode(store.create_run("r", "fake", "seed", {}), "t")
    event = MessageEvent(step=0, message=Message(role="user", content="hello"))
    assert store.append_event(episode.id, 0, event) is True
    assert store.append_event(episode.id, 0, event) is False
    assert store.append_event(episode.id, 0, event.model_dump(mode="json")) is False
    assert _event_rows(store, episode.id) == 1


def test_different_event_at_same_seq_is_a_conflict(store: Store) -> None:
    episode = store.start_episode(store.create_run("r", "fake", "seed", {}), "t")
    store.append_event(episode.id, 0, MessageEvent(step=0, message=Message(role="user", content="hello")))
    with pytest.raises(EventConflictError, match=r"seq 0 already holds a different 'message' event"):
        store.append_event(episode.id, 0, MessageEvent(step=0, message=Message(role="user", content="other")))
    assert store.load_trajectory(episode.id).events[0].message.content == "hello"


def test_gaps_bad_events_and_unknown_ids_are_refused(store: Store) -> None:
    run_id = store.create_run("r", "fake", "seed", {})
    episode = store.start_episode(run_id, "t")
    with pytest.raises(StoreError, match="next seq is 0"):
        store.append_event(episode.id, 3, every_event_type()[0])
    with pytest.raises(StoreError, match="not a trajectory event"):
        store.append_event(episode.id, 0, {"type": "thought", "step": 0})
    with pytest.raises(StoreError, match="expected a trajectory event"):
        store.append_event(episode.id, 0, Totals())
    with pytest.raises(NotFoundError, match="no episode with id 999"):
        store.append_event(999, 0, every_event_type()[0])
    with pytest.raises(NotFoundError, match="no run with id 42"):
        store.start_episode(42, "t")


def test_resume_returns_events_and_next_seq(store: Store) -> None:
    run_id = store.create_run("r", "fake", "seed", {})
    first = store.start_episode(run_id, "t", task_sha256="1" * 64)
    events = every_event_type()
    for seq, event in enumerate(events[:4]):
        store.append_event(first.id, seq, event)
    resumed = store.start_episode(run_id, "t", task_sha256="1" * 64)
    assert (resumed.id, resumed.status, resumed.next_seq) == (first.id, "running", 4)
    assert resumed.events == events[:4]
    for seq, event in enumerate(events[4:], start=resumed.next_seq):
        store.append_event(resumed.id, seq, event)
    assert store.load_trajectory(first.id).events == events
    with pytest.raises(StoreError, match="the task changed"):
        store.start_episode(run_id, "t", task_sha256="2" * 64)


def test_finished_episodes_are_not_pending_and_take_no_events(store: Store) -> None:
    run_id = store.create_run("r", "fake", "seed", {})
    done = store.start_episode(run_id, "a")
    store.append_event(done.id, 0, every_event_type()[0])
    store.finish_episode(done.id, "budget_exhausted", Totals(turns=8))
    failed = store.start_episode(run_id, "b")
    store.finish_episode(failed.id, "model_error", Totals(), status="failed")
    store.start_episode(run_id, "c")
    assert store.pending_tasks(run_id, ["a", "b", "c", "d"]) == ["b", "c", "d"]
    assert store.pending_tasks(run_id, ["a", "b", "c", "d"], final_failures=["model_error"]) == ["c", "d"]
    assert store.pending_tasks(run_id, ["a", "b", "c", "d"], final_failures=["infra_error"]) == ["b", "c", "d"]
    assert store.append_event(done.id, 0, every_event_type()[0]) is False  # a late replay is still harmless
    with pytest.raises(StoreError, match="episode is finished"):
        store.append_event(done.id, 1, every_event_type()[1])
    again = store.start_episode(run_id, "a")
    assert again.status == "done" and again.exit_reason == "budget_exhausted"
    reopened = store.start_episode(run_id, "b")
    assert reopened.status == "running" and reopened.exit_reason == ""
    summary = store.run_summary(run_id)
    assert (summary.episodes, summary.done, summary.running, summary.failed, summary.solved) == (3, 1, 2, 0, 0)
    assert summary.pass_rate == 0.0 and summary.exit_reasons == {"budget_exhausted": 1}


def test_resumable_run_lookup(store: Store) -> None:
    assert store.latest_run() is None and store.find_resumable_run("nightly") is None
    old = store.create_run("nightly", "m1", "seed", {})
    new = store.create_run("nightly", "m2", "seed", {})
    store.create_run("other", "m1", "seed", {})
    assert store.find_resumable_run("nightly").id == new
    assert store.find_resumable_run("nightly", model="m1").id == old
    store.finish_run(new)
    assert store.find_resumable_run("nightly").id == old
    assert store.get_run(new).status == "done" and store.get_run(new).finished is not None
    assert store.latest_run("nightly").id == new
    assert [run.id for run in store.list_runs()] == [new + 1, new, old]
