"""The README's main job, exactly as a new user runs it, through the real CPU verifier (no fake anywhere): every
bundled demonstration is replayed, its candidates compiled, checked and timed again, and solved; the verified
episodes become training data, a tiny random base model is fine-tuned on them, the base and the checkpoint are
evaluated, and the runs are reported."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kernelmosaic.models.replay import bundled_path, load_trajectories
from kernelmosaic.store import open_store

pytestmark = pytest.mark.slow

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_loop_runs_every_stage_on_the_real_outputs(tmp_path, monkeypatch):
    """`kernelmosaic loop`: curate -> generate -> sft export -> sft train -> evaluate -> report, each stage a real
    child command."""
    monkeypatch.chdir(tmp_path)
    url = f"sqlite:///{tmp_path / 'kernelmosaic.db'}"
    done = subprocess.run([sys.executable, "-m", "kernelmosaic.cli", "loop", "--device", "cpu", "--db", url,
                           "--out", str(tmp_path / "loop")], capture_output=True, text=True, timeout=1200,
                          env={**os.environ, "COLUMNS": "200"})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    _check_run(url, done.stdout)
    import datasets

    full = datasets.load_from_disk(str(tmp_path / "loop" / "sft" / "full"))
    assert len(full) == 3 and all(row["messages"] for row in full)
    summary = json.loads((tmp_path / "loop" / "report" / "summary.json").read_text())
    assert summary and (tmp_path / "loop" / "report" / "report.html").stat().st_size > 10_000
    _check_training_and_evaluation(url, tmp_path / "loop", done.stdout)
    _check_outputs_where_the_readme_says(tmp_path)


def _check_outputs_where_the_readme_says(cwd) -> None:
    """Each output the README lists for `loop` is where it says (this test's `--out` is `loop/`, not `runs/loop/`)."""
    text = README.read_text(encoding="utf-8")
    listed = text[text.index("Where its outputs go"):]
    listed = listed[:listed.index("\n\n", listed.index("\n- "))]
    paths = re.findall(r"`((?:\./|runs/)[^`]*)`", listed)
    assert len(paths) >= 8, listed
    for path in paths:
        pattern = path.removeprefix("./").replace("runs/loop/", "loop/").replace("<ID>", "*").rstrip("/")
        assert list(cwd.glob(pattern)), f"README.md says the loop writes {path}: nothing at {cwd / pattern}"


def _check_training_and_evaluation(url: str, out, output: str) -> None:
    """The checkpoint differs from the base it started from, and both were evaluated and compared."""
    from safetensors.torch import load_file

    base, trained = (load_file(str(p / "model.safetensors")) for p in (out / "tiny-base", out / "train" / "final"))
    assert base.keys() == trained.keys() and any(not (base[k] == trained[k]).all() for k in base)
    with open_store(url) as store:
        *_, base_run, checkpoint_run = store.list_runs()[::-1]
    assert (base_run.model, checkpoint_run.model) == (f"hf:{out / 'tiny-base'}", f"hf:{out / 'train' / 'final'}")
    assert f"evaluation runs {base_run.id} (base) and {checkpoint_run.id} (checkpoint)" in " ".join(output.split())
    compared = json.loads((out / "eval-report" / "summary.json").read_text())
    assert [r["run"]["id"] for r in compared["runs"]] == [base_run.id, checkpoint_run.id]
    assert all(r["overall"]["episodes"] == 3 for r in compared["runs"])


def _check_run(url: str, output: str) -> None:
    recorded = {t.task_id for t in load_trajectories(bundled_path())}
    assert "replays recordings by" in output, "a replayed run says who wrote the recording"
    with open_store(url) as store:
        [run] = [r for r in store.list_runs() if r.model == "replay:bundled"]  # the generation run; evaluations follow
        summary = store.run_summary(run.id)
        assert run.status == "done" and run.config["origin_model"]
        assert summary.solved == len(recorded) and summary.failed == 0 and summary.flagged_tasks == {}
        for info in store.list_episodes(run.id):
            [solution] = [s for s in store.solutions(info.id) if s.candidate_sha256 == info.best_candidate_sha256]
            assert solution.verified and solution.verification.timed, info
            assert solution.verdict.env.device == "cpu" and solution.verdict.correctness.passed == solution.verdict.correctness.trials
            trajectory = store.load_trajectory(info.id)
            assert trajectory.tools and trajectory.origin_model
