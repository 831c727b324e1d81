"""A trajectory written event by event comes back identical; results and errors stay typed and clear."""

from __future__ import annotations

import math
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from store_helpers import CANDIDATE, accepted_verdict, every_event_type, rejected_verdict

from kernelmosaic.contracts.trajectory import TRAJECTORY_SCHEMA, Solution, Totals, Trajectory
from kernelmosaic.contracts.verified import check_candidate
from kernelmosaic.store import Store, StoreError, candidate_sha256, open_store


def _record_episode(store: Store) -> tuple[int, Trajectory]:
    run_id = store.create_run("rt", "fake:scripted", "seed", {"budget": {"turns": 8}, "temperature": 0.2})
    episode = store.start_episode(run_id, "L1/matmul", task_sha256="a" * 64, problem_sha256="b" * 64)
    events = every_event_type()
    for seq, event in enumerate(events):
        assert store.append_event(episode.id, seq, event) is True
    sha = store.record_candidate(episode.id, "a first try that does not compile")
    store.record_verdict(episode.id, sha, rejected_verdict())
    sha = store.record_candidate(episode.id, CANDIDATE)
    verdict = accepted_verdict(sha=sha)
    store.record_verdict(episode.id, sha, verdict)
    best = Solution(source=CANDIDATE, candidate_sha256=sha, verdict=verdict, step=1, verification=check_candidate([verdict]))
    totals = Totals(prompt_tokens=120, completion_tokens=80, cost_usd=0.0012, gpu_seconds=3.25, wall_seconds=9.5, turns=1)
    store.finish_episode(episode.id, "submitted", totals, best=best)
    expected = Trajectory(
        task_id="L1/matmul", task_sha256="a" * 64, problem_sha256="b" * 64, model="fake:scripted",
        config={"budget": {"turns": 8}, "temperature": 0.2}, events=events, best=best, totals=totals,
        exit_reason="submitted",
    )  # fmt: skip
    return episode.id, expected


def test_trajectory_with_every_event_type_round_trips(store: Store) -> None:
    episode_id, expected = _record_episode(store)
    loaded = store.load_trajectory(episode_id)
    assert {event.type for event in loaded.events} == {"message", "tool_call", "tool_result", "guidance"}
    assert loaded == expected
    assert loaded.schema_ == TRAJECTORY_SCHEMA
    assert Trajectory.model_validate_json(loaded.to_json()) == expected
    assert loaded.best is not None and loaded.best.verified


def test_reopened_store_reads_the_same_rows(db_url: str) -> None:
    with open_store(db_url) as store:
        episode_id, expected = _record_episode(store)
    with open_store(db_url) as store:
        assert store.load_trajectory(episode_id) == expected
        summary = store.run_summary(store.latest_run().id)
    assert (summary.done, summary.solved, summary.pass_rate) == (1, 1, 1.0)
    assert summary.best_speedups == {"L1/matmul": 2.5}
    assert summary.totals.prompt_tokens == 120 and summary.totals.wall_seconds == 9.5


def test_running_episode_derives_totals_from_events(store: Store) -> None:
    run_id = store.create_run("live", "fake", "seed", {})
    episode = store.start_episode(run_id, "t")
    for seq, event in enumerate(every_event_type()):
        store.append_event(episode.id, seq, event)
    info = store.list_episodes(run_id)[0]
    assert info.status == "running" and info.exit_reason == ""
    assert (info.totals.prompt_tokens, info.totals.completion_tokens, info.totals.turns) == (120, 80, 1)
    assert info.totals.gpu_seconds == 3.25
    store.save_totals(episode.id, Totals(wall_seconds=4.0, turns=1))
    assert store.load_trajectory(episode.id).totals == Totals(wall_seconds=4.0, turns=1)


def test_solution_needs_an_accepted_verdict(store: Store) -> None:
    episode = store.start_episode(store.create_run("s", "fake", "seed", {}), "t")
    sha = store.record_candidate(episode.id, CANDIDATE)
    assert sha == candidate_sha256(CANDIDATE) and store.record_candidate(episode.id, CANDIDATE) == sha
    first = store.record_verdict(episode.id, sha, rejected_verdict())
    assert store.record_verdict(episode.id, sha, rejected_verdict()) == first, "a replayed verdict is not stored twice"
    assert store.solutions(episode.id) == [], "a rejected candidate is no solution"
    with pytest.raises(StoreError, match="record_candidate first"):
        store.record_verdict(episode.id, "f" * 64, accepted_verdict())
    with pytest.raises(StoreError, match="not a kernelmosaic.verdict/1 object"):
        store.record_verdict(episode.id, sha, {"status": "accepted"})
    with pytest.raises(StoreError, match=r"timing\.eager\.median_ms.*not JSON-clean"):
        store.record_verdict(episode.id, sha, accepted_verdict(speedup=math.inf))
    bad_best = Solution(source=CANDIDATE, candidate_sha256="0" * 64, verdict=accepted_verdict(), step=1)
    with pytest.raises(StoreError, match="hashes to"):
        store.finish_episode(episode.id, "submitted", Totals(), best=bad_best)
    # The failed finish rolled back: the episode is still running.
    assert store.get_episode(episode.id).status == "running"


def test_in_memory_store_is_shared_across_threads() -> None:
    with open_store("sqlite://") as store:
        episode_id, expected = _record_episode(store)
        with ThreadPoolExecutor(4) as pool:
            loaded = list(pool.map(lambda _: store.load_trajectory(episode_id), range(8)))
    assert loaded == [expected] * 8


def test_bad_urls_and_files_give_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="does not exist"):
        open_store(f"sqlite:///{tmp_path / 'missing' / 'x.db'}")
    with pytest.raises(StoreError, match="no backend for scheme 'mysql'"):
        open_store("mysql://localhost/x")
    with open_store(str(tmp_path / "plain.db")) as plain:  # a plain path is a SQLite file there
        assert plain.url.endswith("plain.db") and (tmp_path / "plain.db").is_file()
    with pytest.raises(StoreError, match="no store at"):
        open_store(str(tmp_path / "never.db"), create=False)
    assert not (tmp_path / "never.db").exists(), "a read-only open creates nothing"
    not_a_db = tmp_path / "notes.db"
    not_a_db.write_text("these are notes, not a database\n" * 100)
    with pytest.raises(StoreError, match="cannot create or open the tables"):
        open_store(f"sqlite:///{not_a_db}")


def test_newer_schema_is_refused(db_url: str) -> None:
    from sqlalchemy import create_engine, text

    open_store(db_url).close()
    engine = create_engine(db_url)
    with engine.begin() as connection:
        connection.execute(text("UPDATE meta SET value = '99' WHERE key = 'schema_version'"))
    engine.dispose()
    with pytest.raises(StoreError, match="schema version 99"):
        open_store(db_url)


def test_postgres_url_without_driver_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    # None in sys.modules makes `import psycopg` fail as if it were not installed, installed or not.
    monkeypatch.setitem(sys.modules, "psycopg", None)
    with pytest.raises(StoreError, match=r"needs the PostgreSQL driver 'psycopg'") as caught:
        open_store("postgresql+psycopg://user:secret@localhost/km")
    assert "secret" not in str(caught.value)


def test_postgres_is_configured(postgres_url: str) -> None:
    from sqlalchemy import create_engine, text

    engine = create_engine(postgres_url)
    with engine.connect() as connection:
        assert connection.execute(text("SELECT 1")).scalar() == 1
    engine.dispose()
