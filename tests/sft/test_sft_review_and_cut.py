"""The export honours the review's latest decision, and `first_timed_pass` ends only on a verified kernel (episodes
recorded through the real CPU verifier)."""

from __future__ import annotations

import shutil

import pytest

from kernelmosaic.contracts.trajectory import FinalCheckEvent, ToolResultEvent
from kernelmosaic.contracts.verified import check_candidate
from kernelmosaic.sft.config import ExportConfig
from kernelmosaic.sft.export import export_dataset
from kernelmosaic.sft.variants import NoVerifiedCut, first_timed_pass_event, variant_messages
from kernelmosaic.store import open_store
from kernelmosaic.store.reviews import ReviewLog

pytestmark = pytest.mark.slow


def _copy(recorded, tmp_path) -> str:
    """A copy of the session's store, so a review recorded here touches no other test."""
    path = tmp_path / "km.db"
    shutil.copy(recorded.db.removeprefix("sqlite:///"), path)
    return f"sqlite:///{path}"


def _export(db: str, recorded, out):
    config = ExportConfig(runs=[recorded.run_id], tasks=str(recorded.tasks_dir))
    with open_store(db) as store:
        return export_dataset(store, config, out)


def _leaky(recorded):
    with open_store(recorded.db) as store:
        info = next(e for e in store.list_episodes(recorded.run_id) if e.task_id == "sft_leaky")
        return store.load_trajectory(info.id)


def test_a_rejection_after_the_run_removes_the_task_from_the_export(recorded, tmp_path):
    db = _copy(recorded, tmp_path)
    before = _export(db, recorded, tmp_path / "before")
    assert before.rows == {"full": 1, "final_answer": 1, "first_timed_pass": 1}
    assert not before.review_excluded and "review_reject" not in before.skipped
    with open_store(db) as store:
        ReviewLog(store).record_decision("sft_leaky", "accept", "alice")
        ReviewLog(store).record_decision("sft_leaky", "reject", "bob", "the reference ignores the slope's sign")
    after = _export(db, recorded, tmp_path / "after")
    assert after.rows == {"full": 0, "final_answer": 0, "first_timed_pass": 0}
    assert after.skipped["review_reject"] == 1
    assert [(r.task_id, r.decision, r.reviewer) for r in after.review_excluded] == [("sft_leaky", "reject", "bob")]
    card = (tmp_path / "after" / "README.md").read_text()
    assert "review: reject by bob" in card and "the reference ignores the slope's sign" in card
    with open_store(db) as store:  # a later accept is the latest decision again
        ReviewLog(store).record_decision("sft_leaky", "accept", "bob")
    assert _export(db, recorded, tmp_path / "again").rows["full"] == 1


def test_the_cut_ends_on_a_kernel_that_was_verified(recorded):
    trajectory = _leaky(recorded)
    index = first_timed_pass_event(trajectory)
    cut_event = trajectory.events[index]
    assert isinstance(cut_event, ToolResultEvent) and cut_event.verdict.timing.profile == "quick"
    history = [e.verdict for e in trajectory.events if isinstance(e, ToolResultEvent | FinalCheckEvent)
               and e.verdict is not None and e.candidate_sha256 == cut_event.candidate_sha256]
    assert check_candidate(history).verified  # the kernel it ends on went on to pass the full check unchanged


def test_a_quick_pass_of_a_kernel_never_verified_is_not_the_cut(recorded):
    trajectory = _leaky(recorded)
    quick = first_timed_pass_event(trajectory)
    other = "f" * 64  # submit() verified a different kernel than the one benchmark() timed
    events = [e.model_copy(update={"candidate_sha256": other}) if isinstance(e, ToolResultEvent | FinalCheckEvent)
              and e.verdict is not None and e.verdict.timing is not None and e.verdict.timing.profile == "full" else e
              for e in trajectory.events]
    moved = trajectory.model_copy(update={"events": events})
    index = first_timed_pass_event(moved)
    assert index > quick and moved.events[index].candidate_sha256 == other
    assert moved.events[index].verdict.timing.profile == "full"
    cut = variant_messages(moved, "first_timed_pass")
    assert any(c.name == "submit" for m in cut for c in m.tool_calls)


@pytest.mark.parametrize("how", ["quick_only", "never_sanitized_on_cuda"])
def test_an_episode_without_a_verified_step_is_left_out(recorded, how):
    trajectory = _leaky(recorded)

    def weaken(verdict):
        if how == "quick_only" and verdict.timing is not None:
            return verdict.model_copy(update={"timing": verdict.timing.model_copy(update={"profile": "quick"})})
        if how == "never_sanitized_on_cuda":  # judged on a GPU where compute-sanitizer never ran
            return verdict.model_copy(update={"env": verdict.env.model_copy(update={"device": "cuda"})})
        return verdict

    events = [e.model_copy(update={"verdict": weaken(e.verdict)}) if getattr(e, "verdict", None) is not None else e
              for e in trajectory.events]
    weakened = trajectory.model_copy(update={"events": events})
    assert first_timed_pass_event(weakened) == -1
    with pytest.raises(NoVerifiedCut, match="left out of first_timed_pass"):
        variant_messages(weakened, "first_timed_pass")
    assert variant_messages(weakened, "full")  # the other views are not this check's business


def test_the_export_leaves_out_an_episode_with_no_verified_cut(recorded, tmp_path, monkeypatch):
    db = _copy(recorded, tmp_path)
    monkeypatch.setattr("kernelmosaic.sft.variants.first_timed_pass_event", lambda trajectory: -1)
    report = _export(db, recorded, tmp_path / "out")
    assert report.rows == {"full": 1, "final_answer": 1, "first_timed_pass": 0}
    assert list(report.left_out) == ["first_timed_pass"] and len(report.left_out["first_timed_pass"]) == 1
    assert "Left out of `first_timed_pass`" in (tmp_path / "out" / "README.md").read_text()
