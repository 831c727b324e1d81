"""Episodes from the scripted model and the real CPU verifier: replay faithfulness, export, load back, variants."""

from __future__ import annotations

import json
import shutil

import datasets
import pytest
from typer.testing import CliRunner

from kernelmosaic.cli import app
from kernelmosaic.sft.config import ExportConfig
from kernelmosaic.sft.conversation import check_tool_pairing, episode_messages
from kernelmosaic.sft.export import export_dataset
from kernelmosaic.sft.variants import first_timed_pass_event, variant_messages
from kernelmosaic.store import open_store

pytestmark = pytest.mark.slow


def _episode(recorded, task_id):
    with open_store(recorded.db) as store:
        info = next(e for e in store.list_episodes(recorded.run_id) if e.task_id == task_id)
        return info, store.load_trajectory(info.id)


def test_the_stored_episode_replays_to_exactly_what_the_model_was_sent(recorded):
    model = recorded.models["sft_leaky"]
    _, trajectory = _episode(recorded, "sft_leaky")
    rebuilt = episode_messages(trajectory)
    assert len(model.calls) == 5 and model.remaining == 0
    script = model._outputs
    for i, sent in enumerate(model.calls):
        assert rebuilt[: len(sent)] == sent, f"call {i}: the stored conversation differs from what the model saw"
        assert rebuilt[len(sent)] == script[i], f"call {i}: the stored reply differs from the model's"
        assert model.tools_seen[i] == trajectory.tools  # the schemas in the header are those offered
    # After the last reply: one tool message per call, in call order, the call after submit included.
    tail = rebuilt[len(model.calls[-1]) + 1:]
    assert [(m.role, m.tool_call_id) for m in tail] == [("tool", c.id) for c in script[-1].tool_calls]
    assert tail[-1].content.startswith("Not run")
    check_tool_pairing(rebuilt)
    assert rebuilt[1].reasoning == "" and script[0].reasoning and rebuilt[2].reasoning == script[0].reasoning


def _check_row_against(messages, rows_messages):
    assert len(rows_messages) == len(messages)
    for stored, row in zip(messages, rows_messages, strict=True):
        assert row["role"] == stored.role and row["content"] == stored.content
        assert row.get("reasoning_content", "") == stored.reasoning
        if stored.role == "assistant":
            calls = [(c["id"], c["type"], c["function"]["name"], c["function"]["arguments"]) for c in row.get("tool_calls", [])]
            assert calls == [(c.id, "function", c.name, c.arguments) for c in stored.tool_calls]
        if stored.role == "tool":
            assert (row["tool_call_id"], row["name"]) == (stored.tool_call_id, stored.name)
    answered = [m["tool_call_id"] for m in rows_messages if m["role"] == "tool"]
    called = [c["id"] for m in rows_messages if m["role"] == "assistant" for c in m.get("tool_calls", [])]
    assert answered == called  # every tool call has its response, in order


def test_cli_export_loads_back_message_by_message(recorded, tmp_path):
    out = tmp_path / "ds"
    result = CliRunner().invoke(app, ["sft", "export", "--db", recorded.db, "--run", str(recorded.run_id),
                                      "--tasks", str(recorded.tasks_dir), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "episodes per bucket" in result.output and "not_verified" in result.output
    info, trajectory = _episode(recorded, "sft_leaky")
    for variant in ("full", "final_answer", "first_timed_pass"):
        loaded = datasets.load_from_disk(str(out / variant))
        assert len(loaded) == 1, variant  # the unsolved episode is not training data
        row = loaded[0]
        _check_row_against(variant_messages(trajectory, variant), row["messages"])
        assert row["tools"] == [t.openai_format() for t in trajectory.tools]
        parquet = datasets.load_dataset("parquet", data_files=str(out / f"{variant}.parquet"), split="train")
        assert parquet[0]["messages"] == row["messages"]
    full = datasets.load_from_disk(str(out / "full"))[0]
    _check_row_against(episode_messages(trajectory), full["messages"])
    assert full["messages"][2]["reasoning_content"] == "Leaky ReLU is elementwise: one loop over the elements."
    assert (full["task_id"], full["level"], full["category"], full["forms"]) == ("sft_leaky", 1, "activation", ["nl", "reference"])
    assert full["failure_types"] == ["compile_error", "output_mismatch"] and full["first_failure"] == "compile_error"
    assert full["repair_rounds"] == 2 and full["policy"] == "strict" and full["device"] == "cpu"
    assert full["speedup_vs_eager"] == pytest.approx(trajectory.best.verdict.timing.speedup_vs_eager)
    assert full["speedup_vs_eager"] > 0
    assert full["speedup_vs_compile"] == 0.0  # this verifier ran no torch.compile baseline
    assert full["model"] == "scripted:sft" and full["episode_id"] == info.id and full["spec_source"] == "nl+reference"
    counts = json.loads((out / "counts.json").read_text())
    assert counts["totals"] == {"verified": 1, "filtered": 1}
    card = (out / "README.md").read_text()
    assert "config_name: first_timed_pass" in card and "not_verified" in card and "overlap with benchmarks is unknown" in card


def test_variants_cut_and_answer(recorded):
    _, trajectory = _episode(recorded, "sft_leaky")
    full = variant_messages(trajectory, "full")
    cut = variant_messages(trajectory, "first_timed_pass")
    # benchmark() is the first verdict that passed GOOD with timing (the quick profile); submit()'s final check is what
    # made it verified. The cut ends with benchmark()'s answer, so it differs from the full episode: no submit turn.
    assert cut == full[: len(cut)] and len(cut) < len(full)
    assert cut[-1].role == "tool" and cut[-1].name == "benchmark" and cut[-2].tool_calls[0].name == "benchmark"
    assert not any(c.name == "submit" for m in cut for c in m.tool_calls)
    assert trajectory.events[first_timed_pass_event(trajectory)].verdict.timing.profile == "quick"
    answer = variant_messages(trajectory, "final_answer")
    assert [m.role for m in answer] == ["system", "user", "assistant", "tool", "assistant", "tool"]
    assert answer[2].tool_calls[0].name == "write_candidate"
    assert answer[2].tool_calls[0].arguments["source"] == trajectory.best.source
    assert answer[4].tool_calls[0].name == "submit" and answer[5].content.startswith("Submitted")
    check_tool_pairing(answer)
    check_tool_pairing(cut)


def test_decontamination_drops_overlaps_and_lists_them(recorded, tmp_path):
    with open_store(recorded.db) as store:
        config = ExportConfig(runs=[recorded.run_id], tasks=str(recorded.tasks_dir), against=[str(recorded.tasks_dir)],
                              variants=["full"])
        report = export_dataset(store, config, tmp_path / "d1")
        kept = export_dataset(store, config.model_copy(update={"keep_overlaps": True}), tmp_path / "d2")
    assert report.overlapping_tasks == ["sft_leaky"]  # only the tasks of verified episodes are checked
    assert report.rows == {"full": 0} and len(report.overlap_episodes) == 1
    assert kept.rows == {"full": 1}
    card = (tmp_path / "d1" / "README.md").read_text()
    assert "| sft_leaky | sft_leaky |" in card and "dropped" in card
    assert report.counts.totals["decontaminated"] == 0


def test_flagged_task_is_never_exported(recorded, tmp_path):
    db_file = tmp_path / "flagged.db"
    shutil.copy(recorded.db.removeprefix("sqlite:///"), db_file)
    with open_store(f"sqlite:///{db_file}") as store:
        info = next(e for e in store.list_episodes(recorded.run_id) if e.task_id == "sft_leaky")
        store.start_episode(recorded.run_id, info.task_id, info.task_sha256, info.problem_sha256, ["task-audit-failed"])
        report = export_dataset(store, ExportConfig(tasks=str(recorded.tasks_dir), variants=["full"]), tmp_path / "out")
    assert report.rows == {"full": 0} and report.skipped == {"flagged_task": 1, "not_verified": 1}


def test_bad_inputs_exit_2_naming_the_problem(recorded, tmp_path):
    runner = CliRunner()
    unknown = runner.invoke(app, ["sft", "export", "--db", recorded.db, "--run", "999", "--out", str(tmp_path / "x")])
    assert unknown.exit_code == 2 and "no run 999" in unknown.output
    bad = tmp_path / "bad.toml"
    bad.write_text("[sft.export]\nfilters = { min_speedup = -1 }\n")
    result = runner.invoke(app, ["sft", "export", "--db", recorded.db, "--config", str(bad), "--out", str(tmp_path / "y")])
    assert result.exit_code == 2 and "bad.toml: [sft.export] filters.min_speedup" in result.output
    renamed = runner.invoke(app, ["sft", "export", "--db", recorded.db, "--out", str(tmp_path / "y"),
                                  "--set", "sft.export.variants=['first_verified']"])
    assert renamed.exit_code == 2 and "`first_verified` is now `first_timed_pass`" in renamed.output
    no_tasks = runner.invoke(app, ["sft", "export", "--db", recorded.db, "--out", str(tmp_path / "z")])
    assert no_tasks.exit_code == 2 and "'inline'" in no_tasks.output
