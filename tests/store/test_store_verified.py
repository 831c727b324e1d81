"""The store's solutions follow the one definition of verified: demotion, untimed, flagged tasks, CUDA sanitizer,
and a version-1 file re-judged on opening."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import create_engine, text
from store_helpers import CANDIDATE, accepted_verdict, rejected_verdict

from kernelmosaic.contracts.trajectory import Solution, Totals
from kernelmosaic.contracts.verdict import Finding, Status
from kernelmosaic.contracts.verified import AUDIT_FAILED, check_candidate
from kernelmosaic.store import Store, open_store


def _episode(store: Store, task: str = "t", flags: list[str] | None = None) -> int:
    run_id = store.latest_run().id if store.latest_run() else store.create_run("v", "fake", "seed", {})
    return store.start_episode(run_id, task, task_flags=flags or []).id


def test_a_later_rejection_demotes_the_best_and_the_previous_one_returns(store: Store) -> None:
    episode = _episode(store)
    first = store.record_candidate(episode, CANDIDATE)
    store.record_verdict(episode, first, accepted_verdict(2.0, sha=first))
    second = store.record_candidate(episode, CANDIDATE + "# faster\n")
    store.record_verdict(episode, second, accepted_verdict(4.0, sha=second))
    assert [s.candidate_sha256 for s in store.solutions(episode)] == [first, second]
    late = rejected_verdict(Status.output_mismatch, "timed output 3 differs from the reference")
    store.record_verdict(episode, second, late)
    [left] = store.solutions(episode)
    assert left.candidate_sha256 == first and left.verified
    # The agent's best at finish is the rejected candidate: the store refuses to point at it.
    best = Solution(source=CANDIDATE + "# faster\n", candidate_sha256=second, verdict=late, step=3)
    info = store.finish_episode(episode, "submitted", Totals(), best=best)
    assert info.best_candidate_sha256 == "" and info.solved, "solved through the first candidate, not the rejected best"


def test_accepted_then_rejected_is_no_solution_and_not_solved(store: Store) -> None:
    episode = _episode(store)
    sha = store.record_candidate(episode, CANDIDATE)
    test_verdict = accepted_verdict(sha=sha, timed=False)
    store.record_verdict(episode, sha, test_verdict)
    assert store.solutions(episode) == [], "accepted but never timed is not a solution"
    store.record_verdict(episode, sha, rejected_verdict(Status.output_mismatch, "timed-output-check"))
    best = Solution(source=CANDIDATE, candidate_sha256=sha, verdict=test_verdict, step=1)
    info = store.finish_episode(episode, "submitted", Totals(), best=best)
    summary = store.run_summary(info.run_id)
    assert (info.solved, info.best_candidate_sha256, summary.solved) == (False, "", 0)
    assert store.solutions(episode) == []


def test_task_flag_on_a_verdict_marks_every_solution_and_runs_reports_it(store: Store) -> None:
    episode = _episode(store)
    sha = store.record_candidate(episode, CANDIDATE)
    store.record_verdict(episode, sha, accepted_verdict(3.0, sha=sha))
    assert store.solutions(episode)[0].verified
    other = store.record_candidate(episode, CANDIDATE + "# zeros\n")
    degenerate = Finding(rule="task-zero-output-passes", severity="flag", message="zeros pass")
    store.record_verdict(episode, other, accepted_verdict(9.0, sha=other, findings=[degenerate]))
    solutions = store.solutions(episode)
    assert len(solutions) == 2 and not any(s.verified for s in solutions), "kept, marked, never counted"
    assert all(s.verification.task_flags == ["task-zero-output-passes"] for s in solutions)
    best = Solution(source=CANDIDATE, candidate_sha256=sha, verdict=accepted_verdict(3.0, sha=sha), step=1)
    info = store.finish_episode(episode, "submitted", Totals(), best=best)
    summary = store.run_summary(info.run_id)
    assert info.task_flags == ["task-zero-output-passes"] and not info.solved
    assert summary.solved == 0 and summary.flagged_tasks == {"t": ["task-zero-output-passes"]}
    assert summary.best_speedups == {}, "a flagged task has no speedup in the summary"


def test_audit_failed_task_flag_given_at_start(store: Store) -> None:
    episode = _episode(store, "bad", flags=[AUDIT_FAILED])
    sha = store.record_candidate(episode, CANDIDATE)
    store.record_verdict(episode, sha, accepted_verdict(sha=sha))
    [solution] = store.solutions(episode)
    assert solution.verification.flagged and solution.verification.task_flags == [AUDIT_FAILED]


def test_cuda_solution_needs_the_sanitizer(store: Store) -> None:
    episode = _episode(store)
    sha = store.record_candidate(episode, CANDIDATE)
    store.record_verdict(episode, sha, accepted_verdict(sha=sha, device="cuda"))
    assert store.solutions(episode) == []
    clean = {"errors": 0, "exit": 0}
    for claims_nothing in ({"ran": True},  # the tools printed no summary: nothing is claimed, so no pass
                           {"ran": True, "memcheck": clean, "racecheck": {"errors": 0, "exit": 1}, "initcheck": clean}):
        store.record_verdict(episode, sha, accepted_verdict(sha=sha, device="cuda").model_copy(
            update={"sanitizer": claims_nothing}))
        assert store.solutions(episode) == [], claims_nothing
    sanitized = accepted_verdict(sha=sha, device="cuda").model_copy(
        update={"sanitizer": {"ran": True, "memcheck": clean, "racecheck": clean, "initcheck": {"errors": 2, "exit": 0}}})
    store.record_verdict(episode, sha, sanitized)
    [solution] = store.solutions(episode)
    assert solution.verified and solution.verification.sanitized


def test_definition_reasons_name_what_is_missing() -> None:
    untimed = check_candidate([accepted_verdict(timed=False)])
    assert not untimed.verified and any("never timed" in r for r in untimed.reasons)
    assert check_candidate([accepted_verdict(), rejected_verdict()]).reasons[0].startswith("latest verdict is compile_error")
    cuda = check_candidate([accepted_verdict(device="cuda")])
    assert cuda.sanitizer_required and not cuda.candidate_ok
    assert check_candidate([]).reasons == ["never verified"]


def test_version_one_file_is_migrated_and_rejudged(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'old.db'}"
    with open_store(url) as store:
        episode = _episode(store)
        sha = store.record_candidate(episode, CANDIDATE)
        store.record_verdict(episode, sha, accepted_verdict(sha=sha))
        untimed = store.record_candidate(episode, CANDIDATE + "# untimed\n")
        store.record_verdict(episode, untimed, accepted_verdict(sha=untimed, timed=False))
    engine = create_engine(url)
    with engine.begin() as db:  # turn it into what version 1 wrote: no judgement columns, a row per accepted verdict
        cand_id = db.execute(text("SELECT id FROM candidates WHERE sha256 = :s"), {"s": untimed}).scalar()
        verdict_id = db.execute(text("SELECT id FROM verdicts WHERE candidate_id = :c"), {"c": cand_id}).scalar()
        db.execute(text("INSERT INTO solutions (episode_id, candidate_id, verdict_id, step, created, verdict_ids, "
                        "timed, sanitized, verified, task_flags) VALUES (:e, :c, :v, 1, CURRENT_TIMESTAMP, '[]', 0, 0, 1, '[]')"),
                   {"e": episode, "c": cand_id, "v": verdict_id})
        for table, columns in {"solutions": ["verdict_ids", "timed", "sanitized", "verified", "task_flags"],
                               "episodes": ["task_flags", "header", "exit_detail"]}.items():
            for column in columns:
                db.execute(text(f"ALTER TABLE {table} DROP COLUMN {column}"))
        db.execute(text("UPDATE meta SET value = '1' WHERE key = 'schema_version'"))
    engine.dispose()
    with open_store(url) as store:
        solutions = store.solutions(episode)
        assert [s.candidate_sha256 for s in solutions] == [sha], "the untimed version-1 solution was dropped"
        assert store.run_summary(store.latest_run().id).solved == 1
